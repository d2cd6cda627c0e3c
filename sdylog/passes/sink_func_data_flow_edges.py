"""-sdy-sink-func-data-flow-edges: move the shardings of `sdy.func_data_flow_edge`
ops onto their operands (function arguments, call results) and remove them.

An edge without a sharding makes an existing operand sharding fully open.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import replace_op
from sdylog.ir.shardings import fully_open_like, get_sharding, set_sharding
from sdylog.ir.walk import walk_ops


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            for op in list(walk_ops(func.operation)):
                if op.name != "sdy.func_data_flow_edge":
                    continue
                operand = op.operands[0]
                operand_sharding = get_sharding(operand)
                edge_sharding = get_sharding(op.results[0])
                if edge_sharding is not None:
                    set_sharding(operand, edge_sharding)
                elif operand_sharding is not None:
                    set_sharding(operand, fully_open_like(operand_sharding))
                replace_op(op, [operand])
