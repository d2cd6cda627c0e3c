"""StableHLO collectives that change the size of a dimension.

The dimension a collective gathers, scatters, splits or concatenates is
different data on the two sides, so the operand side and the result side each
get a factor of their own there, and both need replication. Every other
dimension is pointwise. (all_reduce, collective_permute, collective_broadcast
keep shapes and are plain pointwise: see elementwise.py.)
"""
from __future__ import annotations

from sdylog.oprules.common import FactorKind, builder_for, int_attr, shape_of

_REPLICATE = FactorKind.NEED_REPLICATION


def _resized_dims(op, dims: list[int]):
    """Pointwise except on `dims`, each of which gets an operand-side and a
    result-side need-replication factor."""
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    b = builder_for(op).add_pointwise_if(in_shape, lambda d: d not in dims)
    for d in dims:
        b.add_factor_to_dim(d, in_shape[d], _REPLICATE, results=False)
        b.add_factor_to_dim(d, out_shape[d], _REPLICATE, operands=False)
    return b.build()


def all_gather(op, conservative):
    return _resized_dims(op, [int_attr(op, "all_gather_dim")])


def reduce_scatter(op, conservative):
    return _resized_dims(op, [int_attr(op, "scatter_dimension")])


def all_to_all(op, conservative):
    split, concat = int_attr(op, "split_dimension"), int_attr(op, "concat_dimension")
    return _resized_dims(op, [split] if split == concat else [split, concat])
