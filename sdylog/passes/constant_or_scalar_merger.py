"""-sdy-constant-or-scalar-merger: merge identical constants and scalar broadcasts.

The inverse of the splitter once shardings are known: within one region, a
constant with the same attributes (value and sharding) as an earlier one, or
a broadcast of the same scalar to the same type with the same attributes, is
replaced by the earlier op.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.op_properties import CONSTANT_LIKE_OPS
from sdylog.ir.rewrite import attributes_of, post_order_ops, replace_op
from sdylog.ir.types import is_scalar


# What merges: constants (ConstantLike ops and sdy.constant) and broadcasts.
_CONSTANTS = CONSTANT_LIKE_OPS | {"sdy.constant"}


class _Regions:
    """The region holding an op, as (parent op, region index), looked up once
    per block (blocks hash; the bindings' Region objects do not)."""

    def __init__(self):
        self.of_block: dict = {}

    def key(self, op):
        block = op.block
        key = self.of_block.get(block)
        if key is None:
            key = self.of_block[block] = _region_key(op, block)
        return key


def _region_key(op, block):
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
    regions = _Regions()
    for op in post_order_ops(root):
        name = op.name
        if name in _CONSTANTS:
            key = (_attr_key(op), regions.key(op))
            cache = constants
        elif name == "stablehlo.broadcast_in_dim":
            operand = op.operands[0]
            if not is_scalar(operand):
                continue
            key = (_attr_key(op), regions.key(op), op.results[0].type, operand)
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
