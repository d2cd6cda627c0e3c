"""-sdy-flatten-call-graph: every function is called from at most one call site.

Calls are visited callee-first (call-graph post order). The first call to a
function keeps it; every later call gets a fresh copy of the function and,
recursively, of everything it calls, each marked `sdy.original_func_name`
and named `<name>_<N>` at the end of the module.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.symbols import (SymbolTable, callee_name, callee_of, calls_in_call_graph_post_order,
                               clone_func_recursively)
from sdylog.passes.census import PRESERVED, census


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    if not found.has("func.call"):
        return PRESERVED
    with module.context:
        symbols = SymbolTable(module)
        called: set[str] = set()
        cloned = False
        for call in calls_in_call_graph_post_order(module, found.calls_in, filename=ctx.filename):
            func = callee_of(symbols, call, ctx.filename)
            name = callee_name(call)
            if name not in called:
                called.add(name)
                continue
            copy = clone_func_recursively(func, symbols)
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(symbols.insert_at_end(copy))
            cloned = True
    return None if cloned else PRESERVED   # (each function called once: as it was)
