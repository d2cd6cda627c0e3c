"""-sdy-propagate-sharding-from-func-to-call: a call without result shardings
takes its callee's result shardings.

The callee's shardings count only if one of them is on a non-maximal mesh;
results without a sharding then get a fully open one. A call that already
has `sdy.sharding` keeps it, even if every entry in it is empty.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import SHARDING, Meshes, func_result_shardings_or_open, set_op_shardings
from sdylog.ir.symbols import SymbolTable, callee_name, lookup_func
from sdylog.passes.census import UNCHANGED, census


def run(module: ir.Module, options: dict, ctx):
    calls = census(module, ctx).ops("func.call")
    if not calls:
        return UNCHANGED
    with module.context:
        symbols = SymbolTable(module)
        meshes = Meshes(module)
        for call in calls:
            if SHARDING in call.attributes:
                continue
            func = lookup_func(symbols, callee_name(call), call, ctx.filename)
            shardings = func_result_shardings_or_open(func, meshes)
            if shardings is not None:
                set_op_shardings(call, shardings)
