"""Linear algebra and friends: cholesky, triangular_solve, fft, rng_bit_generator, rng.

Leading dimensions are batch dimensions (pass-through); the dimensions the
algorithm works across need replication.
"""
from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from sdylog.oprules.common import NULL_DIM, FactorKind, bool_attr, builder_for, ints_attr, shape_of

_REPLICATE = FactorKind.NEED_REPLICATION


def cholesky(op, conservative):
    shape = shape_of(op.operands[0])
    batch = len(shape) - 2
    return builder_for(op).add_pointwise(
        shape, lambda d: FactorKind.PASS_THROUGH if d < batch else _REPLICATE).build()


def triangular_solve(op, conservative):
    """Solves op(a) @ x = b (left side) or x @ op(a) = b, op(a) maybe transposed."""
    a, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    row, col = len(a) - 2, len(a) - 1
    transposed = "transpose_a" in op.attributes and stablehlo.TransposeAttr(
        op.attributes["transpose_a"]).value in ("TRANSPOSE", "ADJOINT")
    b = builder_for(op).add_pointwise(a[:-2])
    if bool_attr(op, "left_side"):
        a_free, a_contract = (col, row) if transposed else (row, col)
        b.add_factor([a_free, row], [NULL_DIM], a[a_free], _REPLICATE)
        b.add_factor([NULL_DIM, col], [col], rhs[col], _REPLICATE)
        b.add_factor([a_contract, NULL_DIM], [row], a[a_contract], _REPLICATE)
    else:
        a_free, a_contract = (row, col) if transposed else (col, row)
        b.add_factor([NULL_DIM, row], [row], rhs[row], _REPLICATE)
        b.add_factor([a_free, col], [NULL_DIM], a[a_free], _REPLICATE)
        b.add_factor([a_contract, NULL_DIM], [col], a[a_contract], _REPLICATE)
    return b.build()


def fft(op, conservative):
    """The trailing len(fft_length) dimensions are transformed (need
    replication); the last one also blocks when the transform changes its
    size (real FFTs)."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    first_fft_dim = len(in_shape) - len(ints_attr(op, "fft_length"))
    b = builder_for(op)
    for d, size in enumerate(in_shape):
        if d < first_fft_dim:
            b.add_factor_to_dim(d, size)
        elif d < len(in_shape) - 1:
            b.add_factor_to_dim(d, size, _REPLICATE)
        else:
            b.add_factor_to_dim(d, size, _REPLICATE, blocked=in_shape[-1] != out_shape[-1])
    return b.build()


def rng_bit_generator(op, conservative):
    """The state (in and out) must stay replicated and never propagates; the
    generated bits are free."""
    b = builder_for(op)
    for d, size in enumerate(shape_of(op.operands[0])):
        b.add_factor([d], [d, NULL_DIM], size, _REPLICATE, blocked=True)
    for d, size in enumerate(shape_of(op.results[1])):
        b.add_factor([NULL_DIM], [NULL_DIM, d], size)
    return b.build()


def rng(op, conservative):
    """stablehlo.rng: the scalar bounds have no dimension, the shape operand
    (a constant, one dimension) stays replicated and never propagates; the
    generated numbers are free. (Shardy's registry has no rule for it: it
    shards the result from its users and inserts no reshard, as this rule
    does.)"""
    b = builder_for(op)
    n_operands = len(op.operands)
    shape_dims = [NULL_DIM] * (n_operands - 1)
    for d, size in enumerate(shape_of(op.operands[-1])):
        b.add_factor(shape_dims + [d], [NULL_DIM], size, _REPLICATE, blocked=True)
    for d, size in enumerate(shape_of(op.results[0])):
        b.add_factor([NULL_DIM] * n_operands, [d], size)
    return b.build()
