"""-sdy-constant-or-scalar-merger: merge identical constants and scalar broadcasts.

The inverse of the splitter once shardings are known: within one region, a
constant with the same attributes (value and sharding) as an earlier one, or
a broadcast of the same scalar to the same type with the same attributes, is
replaced by the earlier op.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.op_properties import CONSTANT_LIKE_OPS
from sdylog.ir.rewrite import as_operation, replace_op
from sdylog.ir.types import is_scalar
from sdylog.passes.census import UNCHANGED, SameOps, census


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
    # (sorted by name: names are unique, attributes are never compared)
    return tuple(sorted(as_operation(op).attributes.items()))


def merge_in(ops) -> list:
    """Merge among `ops`, a function and the ops nested in it in pre-order
    (ops of one region come in program order, as in MLIR's post-order walk);
    returns the erased ops."""
    constants: dict = {}
    broadcasts: dict = {}
    regions = _Regions()
    erased = []
    for op in ops:
        name = op.name
        if name in _CONSTANTS:
            key = (_attr_key(op), regions.key(op))
            cache = constants
        elif name == "stablehlo.broadcast_in_dim":
            operand = op.operands[0]
            if not is_scalar(operand):
                continue
            key = (_attr_key(op), regions.key(op), op.result.type, operand)
            cache = broadcasts
        else:
            continue
        first = cache.setdefault(key, op)
        if first != op:
            replace_op(op, first.results)
            erased.append(op)
    return erased


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    erased = []
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            erased += merge_in(found.within(func))
    return SameOps(tuple(erased)) if erased else UNCHANGED
