"""Ops that combine elements along dimensions: reduce, reduce_window,
select_and_scatter, sort."""
from __future__ import annotations

from sdylog.oprules.common import NULL_DIM, FactorKind, builder_for, int_attr, ints_attr, shape_of


def reduce(op, conservative):
    """Operands are N inputs then N scalar init values; results are N tensors.
    A reduced dimension is a reduction factor of the inputs; a kept one maps
    to the next result dimension."""
    n = len(op.results)
    reduced = set(ints_attr(op, "dimensions"))
    b = builder_for(op)
    out = 0
    for d, size in enumerate(shape_of(op.operands[0])):
        operand_dims = [d] * n + [NULL_DIM] * n
        if d in reduced:
            b.add_factor(operand_dims, [NULL_DIM] * n, size, FactorKind.REDUCTION)
        else:
            b.add_factor(operand_dims, [out] * n, size)
            out += 1
    return b.build()


def _window_passes_through(op, dim: int, window_attr: str) -> bool:
    """A window of size 1, stride 1 and no padding maps input and output
    elements one to one along `dim`."""
    padding = ints_attr(op, "padding")
    if padding is not None and (padding[2 * dim] != 0 or padding[2 * dim + 1] != 0):
        return False
    strides = ints_attr(op, "window_strides") or []
    window = ints_attr(op, window_attr) or []
    return (not strides or strides[dim] == 1) and (not window or window[dim] == 1)


def reduce_window(op, conservative):
    """A result dimension is the number of windows along the input dimension:
    pass-through for trivial windows, else a permutation (windows need halos),
    blocked in conservative mode."""
    def kind(d):
        if _window_passes_through(op, d, "window_dimensions"):
            return FactorKind.PASS_THROUGH
        return FactorKind.PERMUTATION
    return builder_for(op).add_pointwise(
        shape_of(op.results[0]), kind,
        blocked=lambda k: conservative and k is FactorKind.PERMUTATION).build()


def select_and_scatter(op, conservative):
    """Operands: operand, source (one element per window), init value. Along a
    windowed dimension the source has a factor of its own that needs
    replication, and operand and result share a permutation factor; both block
    in conservative mode."""
    source = shape_of(op.operands[1])
    b = builder_for(op)
    for d, size in enumerate(shape_of(op.results[0])):
        if _window_passes_through(op, d, "window_dimensions"):
            b.add_factor_to_dim(d, size)
            continue
        b.add_factor([NULL_DIM, d, NULL_DIM], [NULL_DIM], source[d], FactorKind.NEED_REPLICATION,
                     blocked=conservative)
        b.add_factor([d, NULL_DIM, NULL_DIM], [d], size, FactorKind.PERMUTATION, blocked=conservative)
    return b.build()


def sort(op, conservative):
    """The sort dimension needs replication; it also blocks when it is the only
    dimension of size > 1 (nothing else could be sharded instead)."""
    shape = shape_of(op.operands[0])
    dim = int_attr(op, "dimension", -1)
    only_sort_dim = all(d == dim or size == 1 for d, size in enumerate(shape))
    b = builder_for(op)
    for d, size in enumerate(shape):
        if d == dim:
            b.add_factor_to_dim(d, size, FactorKind.NEED_REPLICATION, blocked=only_sort_dim)
        else:
            b.add_factor_to_dim(d, size)
    return b.build()
