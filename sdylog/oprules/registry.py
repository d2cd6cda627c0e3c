"""Op name -> sharding rule builder: one table.

A builder is `build(op, conservative) -> OpShardingRule | None`; the families
of builders live in the modules beside this one. `rule_for_op` is the one
entry point: a user rule already on the op wins, then the table; ops missing
from the table are unknown (Shardy warns about them and gives them no rule).
"""
from __future__ import annotations

from sdylog.ir.diagnostics import error_at
from sdylog.model.rule import OpShardingRule
from sdylog.oprules import collectives, contraction, elementwise, indexing, linalg, reductions
from sdylog.oprules import shape_ops
from sdylog.oprules.common import UnknownOp, no_rule, pointwise
from sdylog.oprules.custom_call import custom_call

# Ops that need no rule: constants and ops whose shardings other machinery
# handles (functions, calls, control flow, data-flow edges, manual
# computations, barriers), or that carry nothing to shard.
_NO_RULE = [
    "builtin.module", "func.func", "func.call",
    "sdy.constant", "sdy.data_flow_edge", "sdy.func_data_flow_edge", "sdy.manual_computation",
    "sdy.mesh", "sdy.named_computation", "sdy.propagation_barrier", "sdy.reshard",
    "sdy.sharding_group",
    "stablehlo.after_all", "stablehlo.case", "stablehlo.constant", "stablehlo.create_token",
    "stablehlo.get_tuple_element", "stablehlo.infeed", "stablehlo.iota", "stablehlo.outfeed",
    "stablehlo.optimization_barrier", "stablehlo.partition_id", "stablehlo.recv",
    "stablehlo.send", "stablehlo.while",
]

# Block terminators: no rule, and nothing to warn about.
_TERMINATORS = frozenset({"func.return", "stablehlo.return", "sdy.return", "mpmd.return"})

RULES = {
    # element-wise and shape-preserving collectives
    **{f"stablehlo.{name}": pointwise for name in elementwise.POINTWISE_OPS},
    "sdy.sharding_constraint": pointwise,
    "stablehlo.batch_norm_inference": elementwise.batch_norm_inference,
    "stablehlo.bitcast_convert": elementwise.bitcast_convert,
    "stablehlo.clamp": elementwise.operand_shaped,
    "stablehlo.select": elementwise.operand_shaped,
    # collectives that resize a dimension
    "stablehlo.all_gather": collectives.all_gather,
    "stablehlo.all_to_all": collectives.all_to_all,
    "stablehlo.reduce_scatter": collectives.reduce_scatter,
    # data movement
    "stablehlo.broadcast_in_dim": shape_ops.broadcast_in_dim,
    "stablehlo.concatenate": shape_ops.concatenate,
    "stablehlo.dynamic_slice": shape_ops.dynamic_slice,
    "stablehlo.dynamic_update_slice": shape_ops.dynamic_update_slice,
    "stablehlo.pad": shape_ops.padded_or_sliced,
    "stablehlo.reshape": shape_ops.reshape,
    "stablehlo.reverse": shape_ops.reverse,
    "stablehlo.slice": shape_ops.padded_or_sliced,
    "stablehlo.transpose": shape_ops.transpose,
    # contractions
    "stablehlo.convolution": contraction.convolution,
    "stablehlo.dot": contraction.dot,
    "stablehlo.dot_general": contraction.dot_general,
    # reductions and windows
    "stablehlo.reduce": reductions.reduce,
    "stablehlo.reduce_window": reductions.reduce_window,
    "stablehlo.select_and_scatter": reductions.select_and_scatter,
    "stablehlo.sort": reductions.sort,
    # indexing
    "stablehlo.gather": indexing.gather,
    "stablehlo.scatter": indexing.scatter,
    # linear algebra, fft, random bits
    "stablehlo.cholesky": linalg.cholesky,
    "stablehlo.fft": linalg.fft,
    "stablehlo.rng_bit_generator": linalg.rng_bit_generator,
    "stablehlo.triangular_solve": linalg.triangular_solve,
    # custom calls, by call target
    "stablehlo.custom_call": custom_call,
    # known to need no rule
    **{name: no_rule for name in _NO_RULE},
}


def rule_for_op(op, conservative: bool = False, filename: str | None = None,
                strict: bool = False) -> OpShardingRule | None:
    """The op's sharding rule, None when it has none.

    `conservative` is Shardy's conservative-propagation option. An op the
    registry does not know (an unregistered custom call target, an op
    missing from RULES) has no rule; with `strict` it is an SdylogError at
    the op's location instead, with Shardy's warning text.
    """
    op = op.operation if hasattr(op, "operation") else op
    if "sdy.sharding_rule" in op.attributes:
        return OpShardingRule.from_attr(op.attributes["sdy.sharding_rule"])
    try:
        return _build(op, conservative)
    except UnknownOp as unknown:
        if strict:
            raise error_at(op, unknown.message, filename) from None
        return None


def _build(op, conservative: bool) -> OpShardingRule | None:
    build = RULES.get(op.name)
    if build is not None:
        return build(op, conservative)
    if op.name in _TERMINATORS:
        return None
    raise UnknownOp(f"op '{op.name}' is unknown to SDY sharding rule registry")
