"""JAX programs (Explicit axes) that carry an `unreduced` partial sum into a
call: a nested jit, the body JAX outlines a `lax.scan` or a `fori_loop`
into (`@closed_call`), each adding it to another unreduced dot there
(reviewer r37's finding F1, cases37e.py), or transposing it. Lowered on 8 host devices with
their debug locations; prints {name: {"mlir": module text, "xla_error":
max |XLA's result - k * A @ B| (or (A @ B).T)}} as JSON for test_unreduced_sums.py (XLA's
own partitioned run computes them right).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/partition/unreduced_call_programs.py
"""
from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit))
f32 = jnp.float32
UNREDUCED = P("data", None, unreduced={"model"})


def dot(a, b):
    """a @ b, left as partial sums over "model" (a's columns and b's rows are split on it)."""
    return jnp.dot(a, b, out_sharding=UNREDUCED)


def call2(a, b):
    y = dot(a, b)
    f = jax.jit(lambda y, a, b: y + dot(a, b))
    return jax.sharding.reshard(f(y, a, b), P("data"))


def scan(a, b):
    y = dot(a, b)
    return jax.sharding.reshard(lax.scan(lambda c, _: (c + dot(a, b), None), y, None, length=2)[0], P("data"))


def carry(a, b):
    def body(i, c):
        acc, x = c
        return acc + dot(x, b), x
    z = jnp.zeros((8, 8), f32, out_sharding=UNREDUCED)
    acc, _ = lax.fori_loop(0, 3, body, (z, a))
    return jax.sharding.reshard(acc, P("data"))


def call_transpose(a, b):
    y = dot(a, b)
    f = jax.jit(lambda y: jnp.transpose(y))
    return jax.sharding.reshard(f(y), P("data"))


# name: (function, k: the result is k * A @ B, "T": (A @ B).T)
PROGRAMS = {"unred_call2": (call2, 2), "unred_scan": (scan, 3), "unred_carry": (carry, 3),
            "unred_call_transpose": (call_transpose, "T")}


def main():
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((8, 8)).astype(np.float32)
    b_np = rng.standard_normal((8, 8)).astype(np.float32)
    out = {}
    with jax.set_mesh(MESH):
        a = jax.device_put(a_np, NamedSharding(MESH, P("data", "model")))
        b = jax.device_put(b_np, NamedSharding(MESH, P("model", None)))
        for name, (f, k) in PROGRAMS.items():
            text = jax.jit(f).lower(a, b).as_text(debug_info=True)
            got = np.asarray(jax.jit(f)(a, b))
            want = (a_np @ b_np).T if k == "T" else k * (a_np @ b_np)
            out[name] = {"mlir": text, "xla_error": float(np.abs(got - want).max())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
