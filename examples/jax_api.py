#!/usr/bin/env python3
"""sdylog's Python API on a JAX program, end to end (8 simulated CPU devices).

    python examples/jax_api.py

Lowers a two-layer MLP with its input sharded on `data` and its first
weight on `model`, propagates with sdylog, and prints what a JAX user asks:
the output's PartitionSpec (checked against what XLA compiles), every
value's sharding by JAX's names, why the output is sharded so, and how one
activation lies over the devices.
"""
import os
import sys
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

import sdylog  # noqa: E402


def mlp(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return {"out": jnp.tanh(h @ w2), "hidden": h}


def main() -> int:
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    S = jax.ShapeDtypeStruct
    args = (S((32, 64), jnp.float32), S((64, 128), jnp.float32), S((128, 16), jnp.float32))
    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")),
                 NamedSharding(mesh, P()))
    lowered = jax.jit(mlp, in_shardings=shardings).lower(*args)

    result = sdylog.propagate(lowered)
    print(result)
    print("in_specs: ", result.in_specs)
    print("out_specs:", result.out_specs)
    xla = [s.spec for s in jax.tree_util.tree_leaves(lowered.compile().output_shardings)]
    print("XLA:      ", tuple(xla))
    agree = all(NamedSharding(mesh, ours).is_equivalent_to(NamedSharding(mesh, theirs), len(v.shape))
                for ours, theirs, v in zip(result.out_specs, xla, result.outputs))
    print("sdylog and XLA agree" if agree else "sdylog and XLA DISAGREE")

    print("\nevery value, by JAX's name where it has one:")
    for name, value in result.values.items():
        print(f"  {name:16} {str(value.sharding or '-'):40} {value.location}")

    print("\nwhy result['out'] is sharded so:")
    print(result.explain("result['out']"))
    with tempfile.TemporaryDirectory() as d:
        print(result.show("result['hidden']", svg=os.path.join(d, "hidden.svg")))
        result.to_duckdb(os.path.join(d, "relations.duckdb"))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
