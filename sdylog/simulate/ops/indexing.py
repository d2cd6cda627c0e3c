"""Indexing ops: dynamic_slice, dynamic_update_slice, gather, scatter.

Gather and scatter are vectorized: every (batch index, window offset) pair
becomes one row of numpy fancy indices, built once per call with broadcasting.
Start indices are clamped (gather) as StableHLO specifies; scatter skips
updates whose full index falls outside the operand.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sdylog.simulate.ops.reductions import combiner_of
from sdylog.simulate.registry import lowering


def _scalar_index(x) -> int:
    return int(np.asarray(x).reshape(-1)[0])


@lowering("stablehlo.dynamic_slice", alias="view")
def lower_dynamic_slice(ctx):
    sizes = ctx.ints("slice_sizes")
    ins = ctx.ins()
    a, idx = ins[0], ins[1:]
    shape = ctx.shape(ctx.operands[0])
    o = ctx.out_slot()

    def step(env, rt):
        sl = []
        for i, n, size in zip(idx, shape, sizes):
            s = min(max(_scalar_index(env[i]), 0), n - size)
            sl.append(slice(s, s + size))
        env[o] = np.asarray(env[a])[tuple(sl)]
    return step


@lowering("stablehlo.dynamic_update_slice", alias="fresh")
def lower_dynamic_update_slice(ctx):
    ins = ctx.ins()
    a, u, idx = ins[0], ins[1], ins[2:]
    shape = ctx.shape(ctx.operands[0])
    ushape = ctx.shape(ctx.operands[1])
    o = ctx.out_slot()

    def step(env, rt):
        out = np.array(env[a], copy=True)
        sl = []
        for i, n, size in zip(idx, shape, ushape):
            s = min(max(_scalar_index(env[i]), 0), n - size)
            sl.append(slice(s, s + size))
        out[tuple(sl)] = env[u]
        env[o] = out
    return step


@dataclass(frozen=True)
class GatherDims:
    offset_dims: tuple
    collapsed_slice_dims: tuple
    operand_batching_dims: tuple
    start_indices_batching_dims: tuple
    start_index_map: tuple
    index_vector_dim: int


def gather_dims(attr) -> GatherDims:
    from jaxlib.mlir.dialects import stablehlo as shlo
    g = shlo.GatherDimensionNumbers(attr)
    return GatherDims(tuple(g.offset_dims), tuple(g.collapsed_slice_dims),
                      tuple(g.operand_batching_dims), tuple(g.start_indices_batching_dims),
                      tuple(g.start_index_map), g.index_vector_dim)


def _index_vectors(indices: np.ndarray, ivd: int) -> np.ndarray:
    """Indices with the index vector dimension last: shape batch + (n,)."""
    if ivd == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, ivd, -1)


def _batch_coord(batch_shape, dim_in_batch):
    """The batch coordinate along one batch axis, broadcastable over batch_shape."""
    view = [1] * len(batch_shape)
    view[dim_in_batch] = batch_shape[dim_in_batch]
    return np.arange(batch_shape[dim_in_batch]).reshape(view)


def _batch_position(indices_rank: int, ivd: int, indices_dim: int) -> int:
    """Position of an indices dimension among the batch dims (ivd removed)."""
    return indices_dim - (1 if ivd < indices_dim else 0)


def gather(operand, indices, d: GatherDims, slice_sizes, result_shape):
    operand = np.asarray(operand)
    indices = np.asarray(indices)
    vec = _index_vectors(indices, d.index_vector_dim).astype(np.int64)
    batch_shape = vec.shape[:-1]
    nb = len(batch_shape)
    rank = operand.ndim
    # start[dim]: array over batch_shape
    idx_arrays = []
    for dim in range(rank):
        if dim in d.start_index_map:
            k = d.start_index_map.index(dim)
            start = np.clip(vec[..., k], 0, operand.shape[dim] - slice_sizes[dim])
        elif dim in d.operand_batching_dims:
            j = d.operand_batching_dims.index(dim)
            pos = _batch_position(indices.ndim, d.index_vector_dim, d.start_indices_batching_dims[j])
            start = _batch_coord(batch_shape, pos)
        else:
            start = np.zeros((1,) * nb, dtype=np.int64)
        view = [1] * rank
        view[dim] = slice_sizes[dim]
        off = np.arange(slice_sizes[dim]).reshape(view)
        idx_arrays.append(np.reshape(start, start.shape + (1,) * rank) + off.reshape((1,) * nb + tuple(view)))
    g = operand[tuple(idx_arrays)]  # batch_shape + slice_sizes
    drop = set(d.collapsed_slice_dims) | set(d.operand_batching_dims)
    g = g.reshape(batch_shape + tuple(slice_sizes[i] for i in range(rank) if i not in drop))
    # result: offset dims at d.offset_dims, batch dims elsewhere in order
    out_rank = len(result_shape)
    batch_pos = [i for i in range(out_rank) if i not in d.offset_dims]
    src_for = [0] * out_rank
    for j, p in enumerate(batch_pos):
        src_for[p] = j
    for j, p in enumerate(d.offset_dims):
        src_for[p] = nb + j
    return np.transpose(g, src_for).reshape(result_shape)


@lowering("stablehlo.gather", alias="fresh")
def lower_gather(ctx):
    d = gather_dims(ctx.attr("dimension_numbers"))
    sizes = ctx.ints("slice_sizes")
    shape = ctx.result_shape
    a, i = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = gather(env[a], env[i], d, sizes, shape)
    return step


@lowering("stablehlo.dynamic_gather", alias="fresh")
def lower_dynamic_gather(ctx):
    d = gather_dims(ctx.attr("dimension_numbers"))
    shape = ctx.result_shape
    a, i, s = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        sizes = [int(x) for x in np.asarray(env[s]).reshape(-1)]
        env[o] = gather(env[a], env[i], d, sizes, shape)
    return step


@dataclass(frozen=True)
class ScatterDims:
    update_window_dims: tuple
    inserted_window_dims: tuple
    input_batching_dims: tuple
    scatter_indices_batching_dims: tuple
    scatter_dims_to_operand_dims: tuple
    index_vector_dim: int


def scatter_dims(attr) -> ScatterDims:
    from jaxlib.mlir.dialects import stablehlo as shlo
    s = shlo.ScatterDimensionNumbers(attr)
    return ScatterDims(tuple(s.update_window_dims), tuple(s.inserted_window_dims),
                       tuple(s.input_batching_dims), tuple(s.scatter_indices_batching_dims),
                       tuple(s.scattered_dims_to_operand_dims), s.index_vector_dim)


def scatter_targets(operand_shape, indices, update_shape, d: ScatterDims):
    """For every update element: its full operand index (tuple of flat arrays) and a
    mask of those inside the operand."""
    indices = np.asarray(indices)
    vec = _index_vectors(indices, d.index_vector_dim).astype(np.int64)
    urank = len(update_shape)
    scatter_update_dims = [i for i in range(urank) if i not in d.update_window_dims]
    rank = len(operand_shape)
    window_operand_dims = [i for i in range(rank)
                           if i not in d.inserted_window_dims and i not in d.input_batching_dims]
    # every update element's coordinates, as broadcastable aranges
    coords = [np.arange(n).reshape([n if j == i else 1 for j in range(urank)]) for i, n in enumerate(update_shape)]
    # the batch index of update element: coords at scatter_update_dims
    bidx = tuple(coords[i] for i in scatter_update_dims)
    full = []
    for dim in range(rank):
        if dim in d.scatter_dims_to_operand_dims:
            k = d.scatter_dims_to_operand_dims.index(dim)
            start = vec[..., k][bidx] if bidx else vec[..., k]
        elif dim in d.input_batching_dims:
            j = d.input_batching_dims.index(dim)
            pos = _batch_position(indices.ndim, d.index_vector_dim, d.scatter_indices_batching_dims[j])
            start = bidx[pos]
        else:
            start = 0
        if dim in window_operand_dims:
            w = d.update_window_dims[window_operand_dims.index(dim)]
            start = start + coords[w]
        full.append(np.broadcast_to(start, update_shape))
    inside = np.ones(update_shape, dtype=bool)
    for dim, f in enumerate(full):
        inside &= (f >= 0) & (f < operand_shape[dim])
    return tuple(f[inside] for f in full), inside


@lowering("stablehlo.scatter", alias="fresh")
def lower_scatter(ctx):
    d = scatter_dims(ctx.attr("scatter_dimension_numbers"))
    n = (len(ctx.operands) - 1) // 2
    ins = ctx.ins()
    inputs, idx, updates = ins[:n], ins[n], ins[n + 1:]
    outs = ctx.outs()
    operand_shape = ctx.shape(ctx.operands[0])
    update_shape = ctx.shape(ctx.operands[n + 1])
    combine = combiner_of(ctx, ctx.op.regions[0], n, [ctx.dtype(v) for v in ctx.operands[:n]])

    def step(env, rt):
        where, inside = scatter_targets(operand_shape, env[idx], update_shape, d)
        results = [np.array(env[i], copy=True) for i in inputs]
        vals = [np.asarray(env[u])[inside] for u in updates]
        combine.scatter(results, where, vals, env, rt)
        for s, r in zip(outs, results):
            env[s] = r
    return step
