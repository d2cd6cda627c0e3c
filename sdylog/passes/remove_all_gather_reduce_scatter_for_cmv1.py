"""-sdy-remove-all-gather-reduce-scatter-for-cmv1: for XLA's collective
matmul (v1), which finds the communication itself, a dot (`stablehlo.dot` or
`stablehlo.dot_general`) loses the `sdy.all_gather`s that feed it and are
used only there; a dot with no such operand loses the `sdy.reduce_scatter`
that is its only user (when its result has no unreduced axes), the dot
taking the reduce_scatter's sharding. The module is left inconsistent on
purpose, as Shardy's pass leaves it.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.rewrite import defining_op, replace_op, uses
from sdylog.ir.shardings import get_sharding, per_value_attr, unreduced_axes
from sdylog.passes.census import PRESERVED, census

_DOTS = ("stablehlo.dot", "stablehlo.dot_general")


def run(module: ir.Module, options: dict, ctx):
    dots = census(module, ctx).ops_of(_DOTS)
    if not dots:
        return PRESERVED
    removed = []
    with module.context:
        for dot in dots:
            gathers = [p for p in map(defining_op, dot.operands)
                       if p is not None and p.name == "sdy.all_gather" and len(uses(p.result)) == 1]
            removed += gathers
            if gathers:
                continue
            dot_uses = uses(dot.result)
            if len(dot_uses) != 1 or dot_uses[0][0].name != "sdy.reduce_scatter":
                continue
            scatter = dot_uses[0][0]
            sharding = get_sharding(dot.result)
            if sharding is not None and unreduced_axes(sharding):
                continue
            dot.attributes["sdy.sharding"] = per_value_attr([sdy.TensorShardingAttr(get_sharding(scatter.result))])
            removed.append(scatter)
        for op in removed:
            replace_op(op, [op.operands[0]])
    return None if removed else PRESERVED
