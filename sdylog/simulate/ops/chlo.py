"""CHLO ops JAX exports (erf for exact GELU, top_k, the inverse trig family...),
and StableHLO's `map` and static-shaped dynamic ops."""
from __future__ import annotations

import numpy as np

from sdylog.simulate.dtypes import compute_dtype
from sdylog.simulate.registry import lowering


def _special(name):
    import scipy.special as sp  # scipy comes with jax
    return getattr(sp, name)


_UNARY = {
    "chlo.erf": lambda: _special("erf"), "chlo.erfc": lambda: _special("erfc"),
    "chlo.erf_inv": lambda: _special("erfinv"), "chlo.lgamma": lambda: _special("gammaln"),
    "chlo.digamma": lambda: _special("digamma"), "chlo.bessel_i1e": lambda: _special("i1e"),
    "chlo.asin": lambda: np.arcsin, "chlo.acos": lambda: np.arccos, "chlo.atan": lambda: np.arctan,
    "chlo.sinh": lambda: np.sinh, "chlo.cosh": lambda: np.cosh, "chlo.asinh": lambda: np.arcsinh,
    "chlo.acosh": lambda: np.arccosh, "chlo.atanh": lambda: np.arctanh, "chlo.tan": lambda: np.tan,
    "chlo.square": lambda: np.square, "chlo.conj": lambda: np.conj,
    "chlo.is_inf": lambda: np.isinf, "chlo.is_neg_inf": lambda: (lambda x: np.isneginf(x)),
    "chlo.is_pos_inf": lambda: (lambda x: np.isposinf(x)),
}


@lowering(*_UNARY, alias="fresh")
def lower_chlo_unary(ctx):
    fn = _UNARY[ctx.op.name]()
    out = ctx.result_dtype
    cdt = compute_dtype(ctx.dtype(ctx.operands[0]))
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        x = np.asarray(env[a])
        if x.dtype != cdt:
            x = x.astype(cdt)
        env[o] = np.asarray(fn(x)).astype(out, copy=False)
    return step


@lowering("chlo.next_after", alias="fresh")
def lower_next_after(ctx):
    a, b = ctx.ins()
    o = ctx.out_slot()
    out = ctx.result_dtype

    def step(env, rt):
        env[o] = np.nextafter(np.asarray(env[a]), np.asarray(env[b])).astype(out, copy=False)
    return step


@lowering("chlo.top_k", alias="fresh")
def lower_top_k(ctx):
    k = ctx.int_attr("k")
    a = ctx.in_slot()
    vals, idx = ctx.outs()
    idt = ctx.dtype(ctx.results[1])

    def step(env, rt):
        from sdylog.simulate.ops.elementwise import total_order_key
        from sdylog.simulate.dtypes import is_float
        x = np.asarray(env[a])
        key = total_order_key(x) if is_float(x.dtype) else x
        order = np.argsort(~key if key.dtype.kind in "iu" else -key, axis=-1, kind="stable")[..., :k]
        env[vals] = np.take_along_axis(x, order, axis=-1)
        env[idx] = order.astype(idt)
    return step


@lowering("stablehlo.map", alias="fresh")
def lower_map(ctx):
    from sdylog.simulate.ops.reductions import is_vectorizable
    region = ctx.op.regions[0]
    body = ctx.region(0)
    vec = is_vectorizable(region)
    ins, o = ctx.ins(), ctx.out_slot()
    shape, dt = ctx.result_shape, ctx.result_dtype

    def step(env, rt):
        args = [np.asarray(env[i]) for i in ins]
        if vec:
            r = body.run(env, rt, args)[0]
            env[o] = np.array(np.broadcast_to(r, shape), dtype=dt)
            return
        out = np.empty(shape, dtype=dt)
        for idx in np.ndindex(*shape):
            out[idx] = body.run(env, rt, [x[idx] for x in args])[0]
        env[o] = out
    return step


@lowering("stablehlo.dynamic_broadcast_in_dim", alias="view")
def lower_dynamic_broadcast_in_dim(ctx):
    from sdylog.simulate.ops.shapes import lower_broadcast_in_dim
    return lower_broadcast_in_dim(ctx)


@lowering("stablehlo.dynamic_iota", alias="opaque")
def lower_dynamic_iota(ctx):
    from sdylog.simulate.ops.shapes import lower_iota
    return lower_iota(ctx)
