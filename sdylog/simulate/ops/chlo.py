"""CHLO ops JAX exports (erf for exact GELU, top_k, the inverse trig family...),
and StableHLO's `map` and static-shaped dynamic ops."""
from __future__ import annotations

import numpy as np

from sdylog.simulate.dtypes import compute_dtype
from sdylog.simulate.registry import custom_call_target, lowering


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


def _polygamma(n, x):
    """scipy's polygamma, NaN where the order is not a whole number >= 0 (as
    XLA's rewrite of chlo.polygamma gives)."""
    whole = (n == np.floor(n)) & (n >= 0)
    with np.errstate(invalid="ignore"):
        r = _special("polygamma")(np.where(whole, n, 0), x)
    return np.where(whole, r, np.nan)


_BINARY = {"chlo.polygamma": lambda: _polygamma, "chlo.zeta": lambda: _special("zeta")}


@lowering(*_BINARY, alias="fresh")
def lower_chlo_binary(ctx):
    """chlo.polygamma(n, x) and chlo.zeta(x, q), the Hurwitz zeta function."""
    fn = _BINARY[ctx.op.name]()
    out = ctx.result_dtype
    cdt = compute_dtype(out)
    a, b = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        x, y = (np.asarray(env[s]).astype(cdt, copy=False) for s in (a, b))
        env[o] = np.asarray(fn(x, y)).astype(out, copy=False)
    return step


@lowering("chlo.top_k", alias="fresh")
def lower_top_k(ctx):
    k = ctx.int_attr("k")
    a = ctx.in_slot()
    vals, idx = ctx.outs()
    idt = ctx.dtype(ctx.results[1])

    def step(env, rt):
        x = np.asarray(env[a])
        order = _first_k(x, k)
        env[vals] = np.take_along_axis(x, order, axis=-1)
        env[idx] = order.astype(idt)
    return step


def _first_k(x, k: int, largest: bool = True):
    """The positions of the k largest (else smallest) elements of x along its
    last dimension, in that order, ties in index order (chlo.top_k's)."""
    from sdylog.simulate.ops.elementwise import total_order_key
    from sdylog.simulate.dtypes import is_float
    key = total_order_key(x) if is_float(x.dtype) else x
    if largest:
        key = ~key if key.dtype.kind in "iu" else -key
    return np.argsort(key, axis=-1, kind="stable")[..., :k]


@custom_call_target("mhlo.topk")
def lower_mhlo_topk(ctx):
    """custom_call @mhlo.topk (chlo.top_k as XLA writes it): the k (the
    results' last dimension) largest along the last dimension, or smallest
    with `largest = false` in mhlo.backend_config."""
    from jaxlib.mlir import ir
    config = ctx.attr("mhlo.backend_config")
    largest = True
    if isinstance(config, ir.DictAttr) and "largest" in config:
        largest = ir.BoolAttr(config["largest"]).value
    if len(ctx.operands) != 1 or len(ctx.results) != 2:
        raise ctx.error("custom_call @mhlo.topk takes one operand and gives values and indices")
    k = ctx.shape(ctx.results[0])[-1]
    a = ctx.in_slot()
    vals, idx = ctx.outs()
    idt = ctx.dtype(ctx.results[1])

    def step(env, rt):
        x = np.asarray(env[a])
        order = _first_k(x, k, largest)
        env[vals] = np.take_along_axis(x, order, axis=-1)
        env[idx] = order.astype(idt)
    return step


@custom_call_target("ApproxTopK")
def lower_approx_top_k(ctx):
    """custom_call @ApproxTopK (jax.lax.approx_max_k / approx_min_k): operands
    (operand, its indices, two scalar initial values), results (values,
    indices). Executed exactly, as XLA's fallback on CPU does (an approximate
    top-k may return these): the operand and indices sorted along
    `reduction_dim` by the called comparator (operand pair, index pair), the
    first of them kept, as many as the results have."""
    from jaxlib.mlir import ir
    from sdylog.simulate.ops.reductions import _simple_sort_key, sort_order
    from sdylog.ir.op_properties import reduction_dim
    called = ctx.attr("called_computations")
    dim = reduction_dim(ctx.op)
    if dim is None or called is None:
        raise ctx.error("custom_call @ApproxTopK needs mhlo.backend_config's reduction_dim and a "
                        "called comparator")
    if len(ctx.operands) != 4 or len(ctx.results) != 2:
        raise ctx.error("custom_call @ApproxTopK takes four operands and gives values and indices")
    k = ctx.shape(ctx.results[0])[dim]
    if k > ctx.shape(ctx.operands[0])[dim]:
        raise ctx.error("custom_call @ApproxTopK: the simulator cannot give more results than the "
                        "operand has along its reduction dimension")
    name = ir.FlatSymbolRefAttr(ir.ArrayAttr(called)[0]).value
    func = ctx.program.funcs.get(name)
    if func is None:
        raise ctx.error(f"no function named @{name}")
    region = func.regions[0]
    simple = _simple_sort_key(region, 2)
    comp = ctx.compiler.compile_region(region)
    (x_in, i_in, _, _), outs = ctx.ins(), ctx.outs()

    def compare(a_list, b_list, env, rt):
        args = [v for pair in zip(a_list, b_list) for v in pair]
        shape = np.broadcast_shapes(*[np.shape(v) for v in args])
        args = [np.broadcast_to(v, shape) for v in args]
        out = np.empty(shape, dtype=bool)
        for index in np.ndindex(*shape):
            out[index] = np.asarray(comp.run(env, rt, [v[index] for v in args])[0]).reshape(())
        return out

    def step(env, rt):
        xs = [np.asarray(env[x_in]), np.asarray(env[i_in])]
        perm = np.take(sort_order(xs, dim, simple, compare, env, rt), np.arange(k), axis=dim)
        for s, x in zip(outs, xs):
            env[s] = np.take_along_axis(x, perm, axis=dim)
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
