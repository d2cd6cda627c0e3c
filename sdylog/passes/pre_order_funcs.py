"""-sdy-pre-order-funcs: reorder functions callers-first.

Functions with a body move to the end of the module in reverse post order of
the call graph (a caller before its callees), so that walking the module's
functions in order visits blocks top-down, as propagation does after
inlining. Meshes and function declarations stay where they are.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation
from sdylog.ir.symbols import funcs_in_call_graph_pre_order
from sdylog.passes.census import PRESERVED, census


def run(module: ir.Module, options: dict, ctx):
    moved = False
    with module.context:
        for func in funcs_in_call_graph_pre_order(module, census(module, ctx).has("func.call")):
            last = as_operation(module.body.operations[-1])
            if last != func:
                func.move_after(last)
                moved = True
    return None if moved else PRESERVED
