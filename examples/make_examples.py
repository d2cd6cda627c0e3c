#!/usr/bin/env python3
"""Regenerate the example modules with JAX (8 simulated CPU devices).

    python examples/make_examples.py

Each example is `jax.jit(...).lower(...).as_text()` of a small model with a
few user shardings, as a user of sdylog would export it.
"""
import os
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

HERE = Path(__file__).resolve().parent


def mlp(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return jnp.tanh(h @ w2)


def main():
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    spec = jax.ShapeDtypeStruct
    x = spec((32, 64), jnp.float32)
    w1 = spec((64, 128), jnp.float32)
    w2 = spec((128, 16), jnp.float32)
    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")),
                 NamedSharding(mesh, P()))
    text = jax.jit(mlp, in_shardings=shardings).lower(x, w1, w2).as_text()
    (HERE / "mlp.mlir").write_text(text)
    print("wrote", HERE / "mlp.mlir")


if __name__ == "__main__":
    main()
