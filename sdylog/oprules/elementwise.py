"""Ops that work element by element (maybe with broadcast scalars or a bit-width change)."""
from __future__ import annotations

from sdylog.oprules.common import NULL_DIM, FactorKind, builder_for, int_attr, shape_of

# Ops whose rule is the generic pointwise one (common.pointwise: dimension d
# of every tensor is factor d).
POINTWISE_OPS = [
    "abs", "add", "and", "atan2", "cbrt", "ceil", "count_leading_zeros", "compare", "complex",
    "convert", "cosine", "divide", "exponential", "exponential_minus_one", "floor", "imag",
    "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply", "negate",
    "not", "or", "popcnt", "power", "real", "reduce_precision", "remainder", "round_nearest_afz",
    "round_nearest_even", "rsqrt", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor",
    # Collectives that keep every element in place on every device.
    "all_reduce", "collective_broadcast", "collective_permute", "cross-replica-sum",
]


def operand_shaped(op, conservative):
    """Pointwise over the main operand's shape; scalar operands (clamp's min/max,
    select's predicate) are broadcast, so they take no factor."""
    return builder_for(op).add_pointwise(shape_of(op.results[0])).build()


def bitcast_convert(op, conservative):
    """Every dimension but the extra innermost one of the side with the narrower
    element type (it holds the pieces of one wide element: needs replication)."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    b = builder_for(op).add_pointwise(in_shape if len(in_shape) < len(out_shape) else out_shape)
    if len(in_shape) < len(out_shape):
        b.add_factor([NULL_DIM], [len(out_shape) - 1], out_shape[-1], FactorKind.NEED_REPLICATION)
    elif len(in_shape) > len(out_shape):
        b.add_factor([len(in_shape) - 1], [NULL_DIM], in_shape[-1], FactorKind.NEED_REPLICATION)
    return b.build()


def batch_norm_inference(op, conservative):
    """The operand's dimensions carry over; scale/offset/mean/variance (1-D) follow
    the feature dimension."""
    feature = int_attr(op, "feature_index")
    b = builder_for(op)
    n = len(op.operands)
    for d, size in enumerate(shape_of(op.operands[0])):
        stats_dim = 0 if d == feature else NULL_DIM
        b.add_factor([d] + [stats_dim] * (n - 1), [d], size)
    return b.build()
