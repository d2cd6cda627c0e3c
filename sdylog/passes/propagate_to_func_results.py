"""-sdy-propagate-to-func-results: each non-main function's result shardings
become the shardings of the values it returns (removed where those have
none). The main function is `main`, or the only function."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation
from sdylog.ir.shardings import get_sharding, replace_func_shardings
from sdylog.ir.symbols import main_func
from sdylog.passes.census import PRESERVED, SHARDINGS_ONLY


def run(module: ir.Module, options: dict, ctx):
    changed = False
    with module.context:
        main = main_func(module, ctx.filename)
        for func in [as_operation(op) for op in module.body.operations if op.operation.name == "func.func"]:
            if func == main or not func.regions[0].blocks:
                continue
            ret = as_operation(func.regions[0].blocks[0].operations[-1])
            if ret.name != "func.return":
                continue
            changed |= replace_func_shardings(func, [get_sharding(v) for v in ret.operands], results=True)
    return SHARDINGS_ONLY if changed else PRESERVED
