"""The simulator's LAPACK custom calls (sdylog/simulate/ops/linalg.py:
potrf, trsm) against JAX's own results on CPU: cholesky lower and upper,
a matrix that is not positive definite (NaN, by JAX's test of info),
triangular solves lower/upper, transposed, adjoint, unit diagonal and from
the right."""
from __future__ import annotations

import numpy as np
import pytest

from sdylog.ir import parse_module
from sdylog.simulate.interpret import CollectiveStats, DeviceRuntime
from sdylog.simulate.program import Program

jax = pytest.importorskip("jax")
jnp = jax.numpy
jsl = pytest.importorskip("jax.scipy.linalg")
lax = jax.lax

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 5, 5)).astype(np.float32)
SPD = (A @ np.swapaxes(A, -1, -2) + 5 * np.eye(5)).astype(np.float32)
B = rng.standard_normal((3, 5, 2)).astype(np.float32)
B_RIGHT = rng.standard_normal((3, 2, 5)).astype(np.float32)
INDEFINITE = np.array([[[1., 2.], [2., 1.]], [[2., 1.], [1., 2.]]], np.float32)
EYE = 5 * np.eye(5, dtype=np.float32)

CASES = {
    "cholesky_lower": (jnp.linalg.cholesky, [SPD]),
    "cholesky_upper": (lambda x: jsl.cholesky(x, lower=False), [SPD]),
    "cholesky_indefinite": (jnp.linalg.cholesky, [INDEFINITE]),
    "trsm_lower": (lambda x, y: jsl.solve_triangular(x + EYE, y, lower=True), [A, B]),
    "trsm_upper_transposed": (lambda x, y: jsl.solve_triangular(x + EYE, y, lower=False, trans=1), [A, B]),
    "trsm_unit_adjoint": (lambda x, y: jsl.solve_triangular(x, y, lower=True, unit_diagonal=True, trans=2), [A, B]),
    "trsm_right": (lambda x, y: lax.linalg.triangular_solve(x + EYE, y, left_side=False, lower=True,
                                                            transpose_a=True), [A, B_RIGHT]),
}


@pytest.mark.parametrize("name", CASES)
def test_lapack_calls_give_jax_results(name):
    f, args = CASES[name]
    text = jax.jit(f).lower(*args).as_text()
    assert "lapack_" in text
    want = np.asarray(jax.jit(f)(*args))
    module = parse_module(text, f"{name}.mlir", allow_unregistered=True)
    with module.context:
        (got,) = Program(module, f"{name}.mlir").function("main")(list(args), DeviceRuntime(stats=CollectiveStats()))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert np.isnan(want).any() == (name == "cholesky_indefinite")
