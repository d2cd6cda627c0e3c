"""Ops JAX users emit that sdylog's sharding rules and simulator must know
(jnp.cbrt, jax.lax.top_k, jnp.linalg.cholesky...), lowered on 8 host devices
with sharded arguments, and JAX's own results on fixed inputs. For
test_jax_user_ops.py:

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/simulate/jax_user_ops.py OUTDIR

writes OUTDIR/NAME.mlir (the lowered module) and OUTDIR/NAME.npz (in0, in1,
...: the inputs; out0, ...: what jax computes on them) per program.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
f32, c64, i32 = np.float32, np.complex64, np.int32


def spd(x):
    """A symmetric positive definite batch made of x."""
    return x @ jnp.swapaxes(x, -1, -2) + 8 * jnp.eye(x.shape[-1], dtype=x.dtype)


# name: (function, [(shape, dtype)], [partition spec per argument])
PROGRAMS = {
    "reduce_precision": (lambda x: lax.reduce_precision(x, 5, 10) * 2, [((8, 16), f32)], [P("data", "model")]),
    "cbrt": (lambda x: jnp.cbrt(x) + 1, [((8, 16), f32)], [P("data", "model")]),
    "is_finite": (lambda x: jnp.where(jnp.isfinite(1 / x), x, 0.0), [((8, 16), f32)], [P("data", "model")]),
    "popcnt": (lambda x: lax.population_count(x) + 1, [((8, 16), i32)], [P("data", "model")]),
    "real_imag": (lambda z: jnp.real(z) * jnp.imag(z), [((8, 16), c64)], [P("data", "model")]),
    "complex": (lambda a, b: lax.complex(a, b) * 2, [((8, 16), f32), ((8, 16), f32)],
                [P("data", "model"), P("data")]),
    "fft": (jnp.fft.fft, [((8, 16), c64)], [P("data", "model")]),
    "rfft": (jnp.fft.rfft, [((8, 16), f32)], [P("data", "model")]),
    "irfft": (jnp.fft.irfft, [((8, 9), c64)], [P("data")]),
    "fft2": (jnp.fft.fft2, [((4, 8, 16), c64)], [P("data", "model")]),
    "optimization_barrier": (lambda x, y: sum(lax.optimization_barrier((x * 2, y + 1))),
                             [((8, 16), f32), ((8, 16), f32)], [P("data", "model"), P("data")]),
    "top_k": (lambda x: lax.top_k(x, 3), [((8, 16), f32)], [P("data", "model")]),
    "approx_max_k": (lambda x: lax.approx_max_k(x, 3), [((8, 16), f32)], [P("data")]),
    "approx_min_k_dim0": (lambda x: lax.approx_min_k(x, 2, reduction_dimension=0), [((8, 16), f32)],
                          [P(None, "model")]),
    "next_after": (jnp.nextafter, [((8, 16), f32), ((8, 16), f32)], [P("data", "model"), P()]),
    "polygamma": (lambda x: jax.scipy.special.polygamma(1, x * x + 2.0), [((8, 16), f32)], [P("data", "model")]),
    "zeta": (lambda x: jax.scipy.special.zeta(x * x + 2.0, 1.5), [((8, 16), f32)], [P("data", "model")]),
    # on CPU: custom calls @lapack_*_ffi carrying their own sharding rule
    "cholesky": (lambda x: jnp.linalg.cholesky(spd(x)), [((8, 4, 4), f32)], [P("data")]),
    "eigh": (lambda x: jnp.linalg.eigh(spd(x)), [((8, 4, 4), f32)], [P("data")]),
    "qr": (jnp.linalg.qr, [((8, 4, 4), f32)], [P("data")]),
    "solve_triangular": (lambda a, b: jax.scipy.linalg.solve_triangular(
        jnp.tril(a) + 8 * jnp.eye(4), b, lower=True), [((8, 4, 4), f32), ((8, 4, 6), f32)],
        [P("data"), P("data", None, "model")]),
    "solve_triangular_right": (lambda a, b: lax.linalg.triangular_solve(
        jnp.triu(a) + 8 * jnp.eye(4), b, left_side=False, lower=False, transpose_a=True),
        [((8, 4, 4), f32), ((8, 6, 4), f32)], [P("data"), P("data", "model")]),
    "cholesky_c64": (lambda x: jnp.linalg.cholesky(spd(x) + 0j), [((8, 4, 4), f32)], [P("data")]),
    "eigh_c64": (lambda x: jnp.linalg.eigh(spd(x) + 1j * (x - jnp.swapaxes(x, -1, -2)))[0],
                 [((8, 4, 4), f32)], [P("data")]),
}


def inputs(specs, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in specs:
        if dt == i32:
            out.append(rng.integers(-1000, 1000, size=shape).astype(dt))
        elif dt == c64:
            out.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt))
        else:
            out.append(rng.standard_normal(shape).astype(dt))
    return out


def main(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for seed, (name, (fn, specs, parts)) in enumerate(PROGRAMS.items()):
        shardings = [NamedSharding(MESH, p) for p in parts]
        args = inputs(specs, seed)
        jitted = jax.jit(fn, in_shardings=shardings)
        text = jitted.lower(*(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args)).as_text()
        outs = jax.tree.leaves(jitted(*args))
        with open(os.path.join(outdir, f"{name}.mlir"), "w") as f:
            f.write(text)
        np.savez(os.path.join(outdir, f"{name}.npz"), **{f"in{i}": a for i, a in enumerate(args)},
                 **{f"out{i}": np.asarray(o) for i, o in enumerate(outs)})


if __name__ == "__main__":
    main(sys.argv[1])
