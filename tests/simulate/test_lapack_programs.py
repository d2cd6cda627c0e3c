"""LAPACK's getrf and gtsv as JAX calls them on CPU (sdylog/simulate/ops/linalg.py),
on the programs of lapack_programs.py: jnp.linalg.inv, solve, slogdet, det,
lax.linalg.lu (its 1-based int32 pivots made 0-based by JAX, and the
permutation), jax.scipy.linalg.lu on wide and tall matrices, a singular
matrix (info > 0: the factors are still returned), a 1x1 inverse, and
lax.linalg.tridiagonal_solve (m = 8 and m = 1), and with
perturb_singular=True (@tridiagonal_solve_perturbed_ffi: sdylog's own
perturbed_tridiagonal_solve) also on singular matrices, whose zero or tiny
pivots are perturbed, in f32, f64 and c64.

- The module run on one device gives what JAX computed.
- `sdylog simulate`: sharded on the batch dimension, or on the matrices'
  own dimensions (gathered for the call), every device's results match.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.jax_subprocess import generated_programs

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "lapack_programs.py")


def from_json(x) -> np.ndarray:
    if "imag" in x:
        return (np.asarray(x["real"]) + 1j * np.asarray(x["imag"])).astype(x["dtype"])
    return np.asarray(x["value"], dtype=x["dtype"])


NAMES = [f"{op}_{dt}_{spec}" for op in ("inv", "solve", "tridiagonal") for dt in ("float32", "float64", "complex64")
         for spec in ("batch", "rows")]
NAMES += [f"{op}_{dt}" for op in ("slogdet", "lu") for dt in ("float32", "float64", "complex64")]
NAMES += ["det_float32", "scipy_lu_wide_float32", "scipy_lu_tall_float64", "lu_singular_float32",
          "inv_one_by_one_float32", "tridiagonal_m1_float32"]
NAMES += [f"perturbed_{dt}_{spec}" for dt in ("float32", "float64", "complex64") for spec in ("batch", "rows")]
NAMES += [f"perturbed_singular_{dt}" for dt in ("float32", "float64", "complex64")] + ["perturbed_m1_float32"]


def test_every_program_calls_getrf_gtsv_or_the_perturbed_solve(programs):
    assert sorted(programs) == sorted(NAMES)
    for name, p in programs.items():
        if name.startswith("perturbed"):
            assert "@tridiagonal_solve_perturbed_ffi" in p["mlir"], name
            continue
        routine = "gtsv" if name.startswith("tridiagonal") else "getrf"
        letter = {"float32": "s", "float64": "d", "complex64": "c"}[re.search(r"(float32|float64|complex64)", name)[1]]
        assert f"@lapack_{letter}{routine}_ffi" in p["mlir"], name


@pytest.mark.parametrize("name", NAMES)
def test_one_device_gives_what_jax_computes(programs, name):
    from sdylog.ir import parse_module
    from sdylog.simulate.interpret import CollectiveStats, DeviceRuntime
    from sdylog.simulate.program import Program
    p = programs[name]
    args = [from_json(x) for x in p["args"]]
    module = parse_module(p["mlir"], f"{name}.mlir", allow_unregistered=True)
    with module.context:
        got = Program(module, f"{name}.mlir").function("main")(args, DeviceRuntime(stats=CollectiveStats()))
    wants = [from_json(x) for x in p["want"]]
    assert len(got) == len(wants)
    for g, want in zip(got, wants):
        g = np.asarray(g)
        assert g.dtype == want.dtype and g.shape == want.shape
        if want.dtype.kind in "iu":
            np.testing.assert_array_equal(g, want)    # pivots, permutations
        else:
            tol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol)
    if name.startswith("perturbed_singular"):   # finite, and far larger than b: pivots were perturbed
        assert np.isfinite(wants[0]).all() and (abs(wants[0]).max(axis=(1, 2)) > 1e4).all()
    if name == "lu_singular_float32":
        assert np.isfinite(wants[0]).all() and (wants[0][:, 1, 1] == 0).all()   # info 2, not NaN


@pytest.mark.parametrize("name", NAMES)
def test_simulate_matches_sharded(programs, name):
    from sdylog.simulate.simulate import simulate_text
    report = simulate_text(programs[name]["mlir"], f"{name}.py")
    assert report.partitioned and report.devices == 8
    assert report.ok, (report.outputs, report.difference)
    if name.endswith("_rows"):   # the matrices' dimensions are gathered before the call
        assert report.collectives, name
