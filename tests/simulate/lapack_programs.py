"""JAX programs whose CPU lowering calls LAPACK's getrf (jnp.linalg.inv,
solve, slogdet, det, jax.scipy.linalg.lu, lax.linalg.lu) and gtsv
(lax.linalg.tridiagonal_solve, and with perturb_singular=True:
@tridiagonal_solve_perturbed_ffi, on singular matrices too), in f32, f64 and c64, sharded over a 4x2
mesh on the batch dimension or on the matrix's own dimensions; lowered on 8
host devices. Prints {name: {"mlir": module text, "args": [...], "want":
[...]}} as JSON for test_lapack_programs.py: "want" is what JAX computes on
"args" (complex numbers as [real, imaginary]).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/simulate/lapack_programs.py
"""
from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
BATCH, ROWS = P("data"), P(None, "data", "model")   # the batch sharded; each matrix's rows and columns
rng = np.random.default_rng(0)


def matrices(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return (x + 3 * np.eye(shape[-2], shape[-1])).astype(dtype)


def singular(dtype):
    """Matrices whose second column is zero: getrf's info is 2."""
    x = matrices((8, 4, 4), dtype)
    x[:, :, 1] = 0
    return x


def lu(x):
    lu_, pivots, permutation = lax.linalg.lu(x)
    return lu_, pivots, permutation


def tridiagonal(dtype, m=8):
    dl, d, du = (matrices((8, m, 1), dtype)[..., 0] for _ in range(3))
    dl[:, 0] = 0
    du[:, -1] = 0
    return [dl, d + 4, du, matrices((8, m, 2), dtype)]


def perturbed(dl, d, du, b):
    return lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)


def singular_tridiagonal(dtype):
    """Singular tridiagonal matrices: in the first four, column 3 is zero
    (an exact zero pivot, nothing below it to swap in); in the last four,
    real ones: the symmetric matrix shifted by one of its eigenvalues (a
    pivot of rounding size); complex ones: the last column zero. (A complex
    pivot of rounding size is the rounding of complex products and
    quotients, which numpy's and C++'s do not round alike: the solution,
    scaled by its inverse, differs in every digit.)"""
    dl, d, du, b = tridiagonal(dtype)
    dl[:4, 4], d[:4, 3], du[:4, 2] = 0, 0, 0
    if np.dtype(dtype).kind == "c":
        d[4:, -1], du[4:, -2] = 0, 0
        return [dl, d, du, b]
    for i in range(4, 8):
        du[i, :-1] = dl[i, 1:]
        a = np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        d[i] -= np.linalg.eigvalsh(a.astype(np.float64))[2]
    return [dl, d, du, b]


def programs():
    out = {}
    for dt in ("float32", "float64", "complex64"):
        a, b = matrices((8, 4, 4), dt), matrices((8, 4, 2), dt)
        for spec_name, spec in (("batch", BATCH), ("rows", ROWS)):
            out[f"inv_{dt}_{spec_name}"] = (jnp.linalg.inv, [a], (spec,))
            out[f"solve_{dt}_{spec_name}"] = (jnp.linalg.solve, [a, b], (spec, spec))
            out[f"tridiagonal_{dt}_{spec_name}"] = (lax.linalg.tridiagonal_solve, tridiagonal(dt),
                                                    (P("data"), P("data"), P("data"), P("data"))
                                                    if spec_name == "batch" else
                                                    (P(None, "data"), P(None, "data"), P(None, "data"),
                                                     P(None, "data", "model")))
        out[f"slogdet_{dt}"] = (lambda x: tuple(jnp.linalg.slogdet(x)), [a], (BATCH,))
        out[f"lu_{dt}"] = (lu, [a], (ROWS,))
    out["det_float32"] = (jnp.linalg.det, [matrices((8, 4, 4), "float32")], (ROWS,))
    out["scipy_lu_wide_float32"] = (jax.vmap(jsl.lu), [matrices((8, 4, 6), "float32")], (P("data", None, "model"),))
    out["scipy_lu_tall_float64"] = (jax.vmap(jsl.lu), [matrices((8, 6, 4), "float64")], (P("data", "model"),))
    out["lu_singular_float32"] = (lu, [singular("float32")], (BATCH,))
    out["inv_one_by_one_float32"] = (jnp.linalg.inv, [matrices((8, 1, 1), "float32")], (BATCH,))
    out["tridiagonal_m1_float32"] = (lax.linalg.tridiagonal_solve, tridiagonal("float32", m=1), (P("data"),) * 4)
    for dt in ("float32", "float64", "complex64"):
        for spec_name, specs in (("batch", (P("data"),) * 4),
                                 ("rows", (P(None, "data"),) * 3 + (P(None, "data", "model"),))):
            out[f"perturbed_{dt}_{spec_name}"] = (perturbed, tridiagonal(dt), specs)
        out[f"perturbed_singular_{dt}"] = (perturbed, singular_tridiagonal(dt), (P("data"),) * 4)
    m1 = tridiagonal("float32", m=1)
    m1[1][::2] = 0     # 1x1 matrices [0]: the pivot itself is perturbed
    out["perturbed_m1_float32"] = (perturbed, m1, (P("data"),) * 4)
    return out


def as_json(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return {"dtype": str(x.dtype), "real": x.real.tolist(), "imag": x.imag.tolist()}
    return {"dtype": str(x.dtype), "value": x.tolist()}


if __name__ == "__main__":
    result = {}
    for name, (f, args, specs) in programs().items():
        shardings = tuple(NamedSharding(MESH, p) for p in specs)
        jitted = jax.jit(f, in_shardings=shardings)
        want = jitted(*args)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        result[name] = {"mlir": jitted.lower(*args).as_text(debug_info=True),
                        "args": [as_json(x) for x in args], "want": [as_json(x) for x in want]}
    print(json.dumps(result))
