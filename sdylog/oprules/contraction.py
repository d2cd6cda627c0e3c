"""Ops that contract dimensions: dot, dot_general, einsum, convolution.

Contracting dimensions are reduction factors (a sharded contraction leaves
partial sums to all-reduce); batch and free dimensions pass through.
"""
from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo

from sdylog.oprules.common import NULL_DIM, FactorKind, builder_for, int_attr, shape_of, str_attr

_REDUCE = FactorKind.REDUCTION


def dot(op, conservative):
    """stablehlo.dot: vector or matrix operands (rank 1 or 2)."""
    lhs, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    lhs_matrix, rhs_matrix = len(lhs) == 2, len(rhs) == 2
    b = builder_for(op)
    if lhs_matrix:
        b.add_factor([0, NULL_DIM], [0], lhs[0])
    if rhs_matrix:
        b.add_factor([NULL_DIM, 1], [1 if lhs_matrix else 0], rhs[1])
    b.add_factor([1 if lhs_matrix else 0, 0], [NULL_DIM], rhs[0], _REDUCE)
    return b.build()


def dot_general(op, conservative):
    """Result dimensions: batch, then lhs free, then rhs free dimensions."""
    nums = stablehlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    lhs_batch, rhs_batch = list(nums.lhs_batching_dimensions), list(nums.rhs_batching_dimensions)
    lhs_contract = list(nums.lhs_contracting_dimensions)
    rhs_contract = list(nums.rhs_contracting_dimensions)
    lhs, rhs = shape_of(op.operands[0]), shape_of(op.operands[1])
    b = builder_for(op)
    out = 0
    for l, r in zip(lhs_batch, rhs_batch, strict=True):
        b.add_factor([l, r], [out], lhs[l])
        out += 1
    for d, size in enumerate(lhs):
        if d not in lhs_contract and d not in lhs_batch:
            b.add_factor([d, NULL_DIM], [out], size)
            out += 1
    for d, size in enumerate(rhs):
        if d not in rhs_contract and d not in rhs_batch:
            b.add_factor([NULL_DIM, d], [out], size)
            out += 1
    for l, r in zip(lhs_contract, rhs_contract, strict=True):
        b.add_factor([l, r], [NULL_DIM], lhs[l], _REDUCE)
    return b.build()


def einsum(op, conservative):
    """stablehlo.einsum and unary_einsum ("ab,bc->ac", "ab->a"), as the
    dot_general XLA rewrites them into before Shardy sees them: a factor per
    letter, on each dimension that letter names; letters of the result pass
    through (batch and free dimensions), the others are summed over
    (contracting dimensions: reduction factors). Where a letter does not
    name one dimension per tensor (a diagonal such as "ii->i", or "..."),
    every dimension of every tensor is a factor of its own that needs
    replication: the op then runs on whole tensors, which is always right."""
    inputs, _, output = str_attr(op, "einsum_config").partition("->")
    terms = inputs.split(",")
    shapes = [shape_of(v) for v in op.operands]
    named = zip(terms + [output], shapes + [shape_of(op.results[0])])
    b = builder_for(op)
    if any(len(term) != len(shape) or len(set(term)) != len(term) for term, shape in named):
        return _replicated(b, shapes, shape_of(op.results[0]))
    letters = list(output) + [c for t in terms for c in t if c not in output]
    for c in dict.fromkeys(letters):
        dims = [t.find(c) for t in terms]
        size = next(s[d] for s, d in zip(shapes, dims) if d >= 0)
        b.add_factor([NULL_DIM if d < 0 else d for d in dims], [output.find(c) if c in output else NULL_DIM],
                     size, FactorKind.PASS_THROUGH if c in output else _REDUCE)
    return b.build()


def _replicated(b, operand_shapes, result_shape):
    """A factor per dimension of each tensor, needing replication."""
    n = len(operand_shapes)
    for t, shape in enumerate(operand_shapes + [result_shape]):
        for d, size in enumerate(shape):
            dims = [d if i == t else NULL_DIM for i in range(n + 1)]
            b.add_factor(dims[:n], dims[n:], size, FactorKind.NEED_REPLICATION)
    return b.build()


def convolution(op, conservative):
    """Batch and feature dimensions split into group and per-group factors; each
    input spatial dimension splits into a number-of-windows factor (shared
    with the output: a permutation, since windows overlap) and a window-size
    factor (shared with the kernel: a reduction), the larger one major.
    Conservative mode gives spatial dimensions no factors."""
    nums = stablehlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    lhs, rhs, out = shape_of(op.operands[0]), shape_of(op.operands[1]), shape_of(op.results[0])
    batch_groups = int_attr(op, "batch_group_count", 1)
    feature_groups = int_attr(op, "feature_group_count", 1)
    in_batch, in_feature = nums.input_batch_dimension, nums.input_feature_dimension
    k_in, k_out = nums.kernel_input_feature_dimension, nums.kernel_output_feature_dimension
    out_batch, out_feature = nums.output_batch_dimension, nums.output_feature_dimension
    b = builder_for(op)

    if batch_groups > 1:
        b.add_factor([in_batch, k_out], [out_feature], batch_groups)
    b.add_factor([in_batch, NULL_DIM], [out_batch], out[out_batch])

    if not conservative:
        for lhs_d, rhs_d, out_d in zip(nums.input_spatial_dimensions, nums.kernel_spatial_dimensions,
                                       nums.output_spatial_dimensions, strict=True):
            left = lhs[lhs_d]  # what of the input dimension is not factored yet

            def spatial_factor(size: int, in_window: bool):
                nonlocal left
                size = min(left, size)
                if size <= 1:
                    return
                if in_window:
                    b.add_factor([lhs_d, rhs_d], [NULL_DIM], size, _REDUCE)
                else:
                    b.add_factor([lhs_d, NULL_DIM], [out_d], size, FactorKind.PERMUTATION)
                left //= size

            windows, window_size = out[out_d], rhs[rhs_d]
            if windows >= window_size:
                spatial_factor(windows, in_window=False)
                spatial_factor(window_size, in_window=True)
            else:
                spatial_factor(window_size, in_window=True)
                spatial_factor(windows, in_window=False)

    if feature_groups > 1:
        b.add_factor([in_feature, k_out], [out_feature], feature_groups)
    b.add_factor([in_feature, k_in], [NULL_DIM], rhs[k_in], _REDUCE)
    out_features_per_group = out[out_feature] // (batch_groups * feature_groups)
    if out_features_per_group > 1:
        b.add_factor([NULL_DIM, k_out], [out_feature], out_features_per_group)
    return b.build()
