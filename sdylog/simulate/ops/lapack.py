"""JAX's LAPACK custom calls on CPU (jnp.linalg.cholesky, jax.scipy.linalg
.solve_triangular and what is built on them): `lapack_?potrf_ffi` and
`lapack_?trsm_ffi`, by numpy, with LAPACK's meaning of their operands and
of the characters in `mhlo.backend_config` (uplo, side, trans_x, diag).

- potrf(a) -> (factor, info): the Cholesky factor in the `uplo` triangle,
  the other triangle of `a` as it was (LAPACK reads and writes one
  triangle), and per matrix info 0, or 1 when it is not positive definite
  (LAPACK's info is the order of the failing minor: JAX only tests it
  against 0, and its factor is then replaced by NaN).
- trsm(a, b) -> x: op(A) x = b (side L) or x op(A) = b (side R), A the
  `uplo` triangle of `a`, with a unit diagonal if diag is U, op(A) = A,
  A^T or A^H for trans_x N, T, C (alpha 1: JAX's call has no alpha).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from sdylog.simulate.dtypes import compute_dtype
from sdylog.simulate.registry import custom_call_target

_KINDS = "sdcz"


def _config(ctx, name: str) -> str:
    """The character the call's `mhlo.backend_config` gives `name` (an ui8)."""
    return chr(ir.IntegerAttr(ir.DictAttr(ctx.attr("mhlo.backend_config"))[name]).value)


def _hermitian(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix LAPACK reads from one triangle of `a`."""
    t = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    return t + np.conj(np.swapaxes(strict, -1, -2))


def lower_potrf(ctx):
    lower = _config(ctx, "uplo") == "L"
    out, info_dtype = ctx.dtype(ctx.results[0]), ctx.dtype(ctx.results[1])
    cdt = compute_dtype(out)
    a = ctx.in_slot()
    o, i = ctx.out_slot(0), ctx.out_slot(1)

    def step(env, rt):
        x = np.asarray(env[a]).astype(cdt)
        n = x.shape[-1]
        flat = x.reshape(-1, n, n)
        factor, info = flat.copy(), np.zeros(flat.shape[0], dtype=info_dtype)
        for k, m in enumerate(flat):
            try:
                low = np.linalg.cholesky(_hermitian(m, lower))
            except np.linalg.LinAlgError:
                info[k] = 1
                continue
            tri = low if lower else np.conj(low.T)
            keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
            factor[k] = np.where(keep, tri, m)
        env[o] = factor.reshape(x.shape).astype(out)
        env[i] = info.reshape(x.shape[:-2])
    return step


def lower_trsm(ctx):
    left = _config(ctx, "side") == "L"
    lower = _config(ctx, "uplo") == "L"
    trans = _config(ctx, "trans_x")
    unit = _config(ctx, "diag") == "U"
    out = ctx.result_dtype
    cdt = compute_dtype(out)
    a, b = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        m = np.asarray(env[a]).astype(cdt)
        m = np.tril(m) if lower else np.triu(m)
        if unit:
            m = np.where(np.eye(m.shape[-1], dtype=bool), np.ones((), cdt), m)
        if trans == "T":
            m = np.swapaxes(m, -1, -2)
        elif trans == "C":
            m = np.conj(np.swapaxes(m, -1, -2))
        rhs = np.asarray(env[b]).astype(cdt)
        if left:
            x = np.linalg.solve(m, rhs)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(rhs, -1, -2)), -1, -2)
        env[o] = x.astype(out)
    return step


for _k in _KINDS:
    custom_call_target(f"lapack_{_k}potrf_ffi")(lower_potrf)
    custom_call_target(f"lapack_{_k}trsm_ffi")(lower_trsm)
