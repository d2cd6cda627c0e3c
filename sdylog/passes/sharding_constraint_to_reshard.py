"""-sdy-sharding-constraint-to-reshard: every `sdy.sharding_constraint` becomes a
`sdy.reshard` to the same sharding (with the same discardable attributes)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.collectives import create_reshard
from sdylog.ir.rewrite import discardable_attributes, replace_op
from sdylog.passes.census import rewrite_each


def constraint_to_reshard(op) -> None:
    reshard = create_reshard(op.operands[0], op.attributes["sharding"], loc=op.location, ip=ir.InsertionPoint(op),
                             attributes=discardable_attributes(op))
    replace_op(op, reshard.results)


def run(module: ir.Module, options: dict, ctx):
    return rewrite_each(module, ctx, "sdy.sharding_constraint", constraint_to_reshard)
