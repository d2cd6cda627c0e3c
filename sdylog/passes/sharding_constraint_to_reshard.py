"""-sdy-sharding-constraint-to-reshard: every `sdy.sharding_constraint` becomes a
`sdy.reshard` to the same sharding (with the same discardable attributes)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op, discardable_attributes, replace_op
from sdylog.passes.census import rewrite_each


def constraint_to_reshard(op) -> None:
    attrs = {"sharding": op.attributes["sharding"], **discardable_attributes(op)}
    reshard = create_op("sdy.reshard", results=[op.results[0].type], operands=[op.operands[0]],
                        attributes=attrs, loc=op.location, ip=ir.InsertionPoint(op))
    replace_op(op, reshard.results)


def run(module: ir.Module, options: dict, ctx):
    return rewrite_each(module, ctx, "sdy.sharding_constraint", constraint_to_reshard)
