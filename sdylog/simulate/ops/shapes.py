"""Shape ops: broadcast, reshape, transpose, slice, reverse, concatenate, pad, iota."""
from __future__ import annotations

import numpy as np

from sdylog.simulate.registry import lowering


@lowering("stablehlo.broadcast_in_dim", alias="view")
def lower_broadcast_in_dim(ctx):
    dims = ctx.ints("broadcast_dimensions")
    out_shape = ctx.result_shape
    in_shape = ctx.shape(ctx.operands[0])
    # Operand dims go to `dims` of the result; first order them, then add size-1 axes.
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    perm = None if order == list(range(len(dims))) else order
    expanded = [1] * len(out_shape)
    for i in range(len(dims)):
        expanded[dims[i]] = in_shape[i]
    expanded = tuple(expanded)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        x = env[a]
        if perm is not None:
            x = np.transpose(x, perm)
        env[o] = np.broadcast_to(np.reshape(x, expanded), out_shape)
    return step


@lowering("stablehlo.broadcast", alias="view")
def lower_broadcast(ctx):
    out_shape = ctx.result_shape
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = np.broadcast_to(env[a], out_shape)
    return step


@lowering("stablehlo.reshape", "stablehlo.dynamic_reshape", alias="view")
def lower_reshape(ctx):
    shape = ctx.result_shape
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = np.reshape(env[a], shape)
    return step


@lowering("stablehlo.transpose", alias="view")
def lower_transpose(ctx):
    perm = tuple(ctx.ints("permutation"))
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = np.transpose(env[a], perm)
    return step


@lowering("stablehlo.slice", alias="view")
def lower_slice(ctx):
    starts, limits = ctx.ints("start_indices"), ctx.ints("limit_indices")
    strides = ctx.ints("strides") or [1] * len(starts)
    idx = tuple(slice(s, l, st) for s, l, st in zip(starts, limits, strides))
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = np.asarray(env[a])[idx]
    return step


@lowering("stablehlo.reverse", alias="view")
def lower_reverse(ctx):
    dims = tuple(ctx.ints("dimensions"))
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = np.flip(env[a], dims) if dims else env[a]
    return step


@lowering("stablehlo.concatenate", alias="fresh")
def lower_concatenate(ctx):
    dim = ctx.int_attr("dimension")
    ins, o = ctx.ins(), ctx.out_slot()
    dt = ctx.result_dtype

    def step(env, rt):
        env[o] = np.concatenate([env[i] for i in ins], axis=dim).astype(dt, copy=False)
    return step


def pad_array(x, value, low, high, interior):
    """`stablehlo.pad` (negative edges cut, interior padding between elements)."""
    x = np.asarray(x)
    out_shape = [lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in zip(x.shape, low, high, interior)]
    out = np.full(out_shape, value, dtype=x.dtype)
    src, dst = [], []
    for n, lo, it, size in zip(x.shape, low, interior, out_shape):
        step = it + 1
        # input i lands at lo + i*step; keep those in [0, size)
        first = 0 if lo >= 0 else (-lo + step - 1) // step
        last = n - 1
        if lo + last * step >= size:
            last = (size - 1 - lo) // step
        if last < first or size <= 0:
            return out
        src.append(slice(first, last + 1))
        dst.append(slice(lo + first * step, lo + last * step + 1, step))
    if x.size:
        out[tuple(dst)] = x[tuple(src)]
    return out


@lowering("stablehlo.pad", alias="fresh")
def lower_pad(ctx):
    low, high = ctx.ints("edge_padding_low"), ctx.ints("edge_padding_high")
    interior = ctx.ints("interior_padding")
    a, v = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = pad_array(env[a], np.asarray(env[v]), low, high, interior)
    return step


@lowering("stablehlo.iota", alias="opaque")
def lower_iota(ctx):
    dim = ctx.int_attr("iota_dimension")
    shape, dt = ctx.result_shape, ctx.result_dtype
    o = ctx.out_slot()
    line = np.arange(shape[dim]).astype(dt) if shape else np.zeros((), dt)
    view = [1] * len(shape)
    if shape:
        view[dim] = shape[dim]
    value = np.broadcast_to(line.reshape(view), shape) if shape else np.asarray(0, dtype=dt)

    def step(env, rt):
        env[o] = value
    return step


@lowering("stablehlo.get_dimension_size", alias="opaque")
def lower_get_dimension_size(ctx):
    n = ctx.shape(ctx.operands[0])[ctx.int_attr("dimension")]
    value = np.asarray(n, dtype=ctx.result_dtype)
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = value
    return step
