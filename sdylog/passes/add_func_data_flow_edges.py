"""-sdy-add-func-data-flow-edges: a `sdy.func_data_flow_edge` on every argument
of every non-main function and on every call result.

Edges on function arguments go at the start of the body, edges on call
results right after the call; each takes over the value's uses and copies
its sharding. Values that are not statically shaped (tokens) are skipped.
The main function is `main`, or the only function of the module.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op, ip_after_op
from sdylog.ir.shardings import get_sharding, set_op_shardings
from sdylog.ir.symbols import main_func
from sdylog.ir.types import is_static_shaped
from sdylog.ir.walk import walk_ops


def _add_edge(value, loc, ip) -> None:
    if not is_static_shaped(value.type):
        return
    edge = create_op("sdy.func_data_flow_edge", results=[value.type], operands=[value], loc=loc, ip=ip)
    value.replace_all_uses_except(edge.results[0], edge)
    sharding = get_sharding(value)
    if sharding is not None:
        set_op_shardings(edge, [sharding])


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        main = main_func(module, ctx.filename)
        ops = list(walk_ops(module.operation))
        for func in ops:
            if func.name != "func.func" or func == main or not func.regions[0].blocks:
                continue
            entry = func.regions[0].blocks[0]
            first = next(iter(entry.operations), None)
            ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(entry)
            for arg in entry.arguments:
                _add_edge(arg, func.location, ip)
        for call in ops:
            if call.name == "func.call":
                ip = ip_after_op(call)
                for result in call.results:
                    _add_edge(result, call.location, ip)
