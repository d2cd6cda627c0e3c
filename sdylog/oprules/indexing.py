"""gather and scatter: one walk over the slices (gather's result, scatter's
updates), since the two ops mirror each other.

A slices dimension is either an offset dimension (it runs along an input
dimension, within one slice) or a batch dimension (it runs over the indices).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from sdylog.oprules.common import NULL_DIM, FactorKind, builder_for, producer, shape_of

# add(input_dim, indices_dim, slices_dim, size, kind, blocked)
AddFactor = Callable[[int, int, int, int, FactorKind, bool], None]


@dataclass(frozen=True)
class _Slicing:
    """What gather and scatter have in common, in gather's words."""
    input_shape: tuple[int, ...]
    slices_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    index_vector_dim: int
    offset_dims: tuple[int, ...]
    collapsed_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    indices_batching_dims: tuple[int, ...]


def _add_slicing_factors(s: _Slicing, add: AddFactor, scatter: bool, scatter_reduces: bool) -> None:
    offset_inputs = iter(d for d in range(len(s.input_shape))
                         if d not in s.collapsed_dims and d not in s.input_batching_dims)
    batch_pos = 0
    for slices_dim, slices_size in enumerate(s.slices_shape):
        if slices_dim in s.offset_dims:
            input_dim = next(offset_inputs)
            input_size = s.input_shape[input_dim]
            if input_size == slices_size:  # the whole dimension: shared
                add(input_dim, NULL_DIM, slices_dim, input_size, FactorKind.PASS_THROUGH, False)
            elif scatter:
                # Updating a window of a sharded dimension would need the whole
                # window on every device: both sides replicate.
                add(input_dim, NULL_DIM, NULL_DIM, input_size, FactorKind.NEED_REPLICATION, False)
                add(NULL_DIM, NULL_DIM, slices_dim, slices_size, FactorKind.NEED_REPLICATION, False)
            elif slices_size == 1:
                # Each device gathers from its shard (zero elsewhere): all-reduce.
                add(input_dim, NULL_DIM, NULL_DIM, input_size, FactorKind.REDUCTION, False)
                add(NULL_DIM, NULL_DIM, slices_dim, slices_size, FactorKind.NEED_REPLICATION, False)
            else:
                add(input_dim, NULL_DIM, slices_dim, input_size, FactorKind.NEED_REPLICATION, True)
        else:
            # Batch dimensions of the slices are the indices' dimensions, in
            # order, skipping the index vector dimension.
            indices_dim = batch_pos if batch_pos < s.index_vector_dim else batch_pos + 1
            batch_pos += 1
            input_dim = NULL_DIM  # implicit batch dimension: indices and slices only
            if indices_dim in s.indices_batching_dims:
                input_dim = s.input_batching_dims[s.indices_batching_dims.index(indices_dim)]
            kind = FactorKind.PASS_THROUGH
            if scatter and input_dim == NULL_DIM:
                # Updates from several devices may hit one element: combine them
                # with the update computation when it is a known reduction.
                kind = FactorKind.REDUCTION if scatter_reduces else FactorKind.NEED_REPLICATION
            add(input_dim, indices_dim, slices_dim, slices_size, kind, False)

    for d in s.collapsed_dims:
        size = s.input_shape[d]
        if scatter:
            kind = FactorKind.PASS_THROUGH
        else:  # a sharded collapsed dimension makes the gather an all-reduce
            kind = FactorKind.NEED_REPLICATION if size == 1 else FactorKind.REDUCTION
        add(d, NULL_DIM, NULL_DIM, size, kind, False)

    if s.index_vector_dim < len(s.indices_shape):
        add(NULL_DIM, s.index_vector_dim, NULL_DIM, s.indices_shape[s.index_vector_dim],
            FactorKind.NEED_REPLICATION, False)


def gather(op, conservative):
    nums = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    s = _Slicing(shape_of(op.operands[0]), shape_of(op.results[0]), shape_of(op.operands[1]),
                 nums.index_vector_dim, tuple(nums.offset_dims), tuple(nums.collapsed_slice_dims),
                 tuple(nums.operand_batching_dims), tuple(nums.start_indices_batching_dims))
    b = builder_for(op)

    def add(input_dim, indices_dim, slices_dim, size, kind, blocked):
        b.add_factor([input_dim, indices_dim], [slices_dim], size, kind, blocked)
    _add_slicing_factors(s, add, scatter=False, scatter_reduces=False)
    return b.build()


_COMBINERS = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum"}
_LOGICAL_COMBINERS = {"stablehlo.and", "stablehlo.or"}  # only on i1


def scatter_combines_by_reduction(op) -> bool:
    """The update computation returns, for each input i, one associative and
    commutative binary op (the same kind for all) of block arguments i and
    i + N: scattered updates can then be combined across devices."""
    n = (len(op.operands) - 1) // 2
    blocks = list(op.regions[0].blocks)
    if not blocks:
        return False
    block = blocks[0]
    if len(block.arguments) != 2 * n:
        return False
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != "stablehlo.return" or len(ops[-1].operands) != n:
        return False
    kinds = set()
    for i, value in enumerate(ops[-1].operands):
        combiner = producer(value)
        if combiner is None or len(combiner.operands) != 2:
            return False
        if not isinstance(value.type, ir.RankedTensorType):
            return False
        element = value.type.element_type
        i1 = isinstance(element, ir.IntegerType) and element.width == 1
        if combiner.name not in _COMBINERS and not (i1 and combiner.name in _LOGICAL_COMBINERS):
            return False
        kinds.add(combiner.name)
        args = [_block_arg_number(v, block) for v in combiner.operands]
        if sorted(args, key=lambda a: -1 if a is None else a) != [i, i + n]:
            return False
    return len(kinds) == 1


def _block_arg_number(value, block) -> int | None:
    if isinstance(value.owner, ir.Block) and value.owner == block:
        return ir.BlockArgument(value).arg_number
    return None


def scatter(op, conservative):
    """Operands: N inputs, the indices, N updates; results: N tensors like the inputs."""
    n = (len(op.operands) - 1) // 2
    nums = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    s = _Slicing(shape_of(op.operands[0]), shape_of(op.operands[n + 1]), shape_of(op.operands[n]),
                 nums.index_vector_dim, tuple(nums.update_window_dims),
                 tuple(nums.inserted_window_dims), tuple(nums.input_batching_dims),
                 tuple(nums.scatter_indices_batching_dims))
    b = builder_for(op)

    def add(input_dim, indices_dim, slices_dim, size, kind, blocked):
        b.add_factor([input_dim] * n + [indices_dim] + [slices_dim] * n, [input_dim] * n, size,
                     kind, blocked)
    _add_slicing_factors(s, add, scatter=True, scatter_reduces=scatter_combines_by_reduction(op))
    return b.build()
