"""-sdy-constant-or-scalar-merger: merge identical constants and scalar broadcasts.

The inverse of the splitter once shardings are known: within one region, a
constant with the same attributes (value and sharding) as an earlier one, or
a broadcast of the same scalar to the same type with the same attributes, is
replaced by the earlier op.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.op_properties import is_constant_like
from sdylog.ir.rewrite import attributes_of, post_order_ops, replace_op
from sdylog.ir.types import is_scalar


def _region_key(op):
    block = op.block
    parent = op.parent
    if parent is None:
        return None
    parent = parent.operation if hasattr(parent, "operation") else parent
    for i, region in enumerate(parent.regions):
        if region == block.region:
            return (parent, i)
    return (parent, -1)


def _attr_key(op):
    return tuple(sorted(attributes_of(op).items(), key=lambda kv: kv[0]))


def merge_in(root) -> None:
    constants: dict = {}
    broadcasts: dict = {}
    for op in post_order_ops(root):
        if op.name == "sdy.constant" or is_constant_like(op):
            key = (_attr_key(op), _region_key(op))
            cache = constants
        elif op.name == "stablehlo.broadcast_in_dim" and is_scalar(op.operands[0]):
            key = (_attr_key(op), _region_key(op), op.results[0].type, op.operands[0])
            cache = broadcasts
        else:
            continue
        first = cache.setdefault(key, op)
        if first != op:
            replace_op(op, first.results)


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            merge_in(func.operation)
