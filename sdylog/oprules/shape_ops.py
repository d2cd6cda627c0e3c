"""Ops that move, cut or pad data without computing: broadcast_in_dim, reshape,
transpose, concatenate, pad, slice, dynamic_slice, dynamic_update_slice, reverse."""
from __future__ import annotations

import math
from dataclasses import dataclass

from sdylog.oprules.common import (CONSTANT_OPS, NULL_DIM, FactorKind, builder_for, int_attr,
                                   ints_attr, producer, producer_name, shape_of)


def broadcast_in_dim(op, conservative):
    """A result dimension that comes from an operand dimension of the same size
    shares its factor; a new or expanded (size 1 -> n) result dimension has a
    factor of its own (the expanded operand dimension keeps a size-1 factor)."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    source = {out_d: in_d for in_d, out_d in enumerate(ints_attr(op, "broadcast_dimensions"))}
    b = builder_for(op)
    for out_d, size in enumerate(out_shape):
        in_d = source.get(out_d, NULL_DIM)
        if in_d != NULL_DIM and in_shape[in_d] == 1 and size != 1:
            b.add_factor([in_d], [NULL_DIM], 1)
            in_d = NULL_DIM
        b.add_factor([in_d], [out_d], size)
    return b.build()


def transpose(op, conservative):
    in_shape = shape_of(op.operands[0])
    b = builder_for(op)
    for out_d, in_d in enumerate(ints_attr(op, "permutation")):
        b.add_factor([in_d], [out_d], in_shape[in_d])
    return b.build()


def reverse(op, conservative):
    """Reversed dimensions can stay sharded, at the price of a permutation."""
    reversed_dims = set(ints_attr(op, "dimensions"))
    return builder_for(op).add_pointwise(
        shape_of(op.results[0]),
        lambda d: FactorKind.PERMUTATION if d in reversed_dims else FactorKind.PASS_THROUGH).build()


def padded_or_sliced(op, conservative):
    """pad, slice: the start offsets are static, so a padded or sliced dimension
    can stay sharded by shifting data (a permutation), except in conservative
    mode, where it blocks."""
    return builder_for(op).add_pointwise_with_mismatch(
        shape_of(op.operands[0]), shape_of(op.results[0]), FactorKind.PERMUTATION,
        mismatch_blocked=conservative).build()


def dynamic_slice(op, conservative):
    """Dynamic start indices: a sliced dimension must be replicated, and blocks."""
    return builder_for(op).add_pointwise_with_mismatch(
        shape_of(op.operands[0]), shape_of(op.results[0]), FactorKind.NEED_REPLICATION,
        mismatch_blocked=True).build()


def dynamic_update_slice(op, conservative):
    """On an updated (smaller) dimension the operand/result stay sharded (each
    device updates its own shard with local indices) while the update has a
    factor of its own that needs replication, unless every start index is a
    constant."""
    operand_shape, update_shape = shape_of(op.operands[0]), shape_of(op.operands[1])
    n = len(op.operands)
    constant_indices = all(producer_name(v) in CONSTANT_OPS for v in op.operands[2:])
    b = builder_for(op)
    for d, (operand_size, update_size) in enumerate(zip(operand_shape, update_shape)):
        if operand_size == update_size:
            b.add_factor_to_dim(d, operand_size)
            continue
        b.add_factor([d] + [NULL_DIM] * (n - 1), [d], operand_size)
        b.add_factor([NULL_DIM, d] + [NULL_DIM] * (n - 2), [NULL_DIM], update_size,
                     FactorKind.PASS_THROUGH if constant_indices else FactorKind.NEED_REPLICATION)
    return b.build()


def _before_slice(value):
    """The sliced tensor when `value` is a slice's result, else `value`."""
    p = producer(value)
    return p.operands[0] if p is not None and p.name == "stablehlo.slice" else value


def _concat_dim_kind(op) -> FactorKind:
    """The concatenated dimension needs replication, unless the operands are
    slices (of anything), or slices of one tensor together with that tensor:
    then the concatenation is a permutation of data already there."""
    operands = list(op.operands)
    is_slice = [producer_name(v) == "stablehlo.slice" for v in operands]
    if all(is_slice):
        return FactorKind.PERMUTATION
    first = _before_slice(operands[0])
    if any(is_slice) and all(_before_slice(v) == first for v in operands):
        return FactorKind.PERMUTATION
    return FactorKind.NEED_REPLICATION


def concatenate(op, conservative):
    """Pointwise; conservative mode leaves the concatenated dimension without a
    factor (each tensor then gets a size-1 factor of its own there)."""
    dim = int_attr(op, "dimension")
    kind = _concat_dim_kind(op)
    return builder_for(op).add_pointwise_if(
        shape_of(op.results[0]), lambda d: not conservative or d != dim,
        lambda d: kind if d == dim else FactorKind.PASS_THROUGH).build()


# --- reshape -----------------------------------------------------------------------
@dataclass
class _ReshapeSide:
    """One side of a reshape, read major to minor.

    `spanned` is the product of the sizes of the dimensions entered so far and
    `factored` the product of the factors emitted for this side; the current
    dimension is complete when the two are equal.
    """
    shape: tuple[int, ...]
    dim: int = 0
    spanned: int = 1
    factored: int = 1

    @property
    def done(self) -> bool:
        return self.dim >= len(self.shape)

    def at_unit_dim(self) -> bool:
        return not self.done and self.shape[self.dim] == 1

    def enter_dim_if_complete(self) -> None:
        if not self.done and self.spanned == self.factored:
            self.spanned *= self.shape[self.dim]

    @property
    def left(self) -> int:
        """What is still to factor of the current dimension."""
        return self.spanned // self.factored

    def step_if_complete(self) -> None:
        if not self.done and self.spanned == self.factored:
            self.dim += 1


def _catch_up_factor(left: int, behind: int, ahead: int, common: int) -> int:
    """The next factor of a side whose factors (product `behind`) lag the other
    side's (`ahead`): the gap itself when it fits in what is left, so that the
    sides meet again; else what is left over the sides' common divisor, keeping
    that divisor for later; else all that is left."""
    if ahead % behind == 0 and left % (ahead // behind) == 0:
        return ahead // behind
    if left > common:
        return left // common
    return left


def reshape(op, conservative):
    """Factor both shapes into one sequence of factors, major to minor.

    While both sides have emitted the same product, the greatest common
    divisor of their current dimensions' remainders is a factor both share;
    when that is 1, each side takes its remainder as a factor of its own and
    they diverge until their products meet again. A dimension merged or
    split by the reshape thus maps to several factors. Size-1 dimensions get
    size-1 factors of their own. A reshape with no elements has no rule.
    """
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    if math.prod(in_shape) == 0:
        return None
    b = builder_for(op)
    src, dst = _ReshapeSide(in_shape), _ReshapeSide(out_shape)
    while not (src.done and dst.done):
        if src.at_unit_dim():
            b.add_factor([src.dim], [NULL_DIM], 1)
            src.dim += 1
            continue
        if dst.at_unit_dim():
            b.add_factor([NULL_DIM], [dst.dim], 1)
            dst.dim += 1
            continue
        src.enter_dim_if_complete()
        dst.enter_dim_if_complete()
        common = math.gcd(src.left, dst.left)
        if src.factored == dst.factored:
            if common > 1:
                b.add_factor([src.dim], [dst.dim], common)
                src.factored *= common
                dst.factored *= common
            else:
                left_in, left_out = src.left, dst.left
                b.add_factor([src.dim], [NULL_DIM], left_in)
                src.factored *= left_in
                b.add_factor([NULL_DIM], [dst.dim], left_out)
                dst.factored *= left_out
        elif src.factored < dst.factored:
            f = _catch_up_factor(src.left, src.factored, dst.factored, common)
            b.add_factor([src.dim], [NULL_DIM], f)
            src.factored *= f
        else:
            f = _catch_up_factor(dst.left, dst.factored, src.factored, common)
            b.add_factor([NULL_DIM], [dst.dim], f)
            dst.factored *= f
        src.step_if_complete()
        dst.step_if_complete()
    return b.build()
