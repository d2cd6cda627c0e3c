"""JAX programs the partitioner once refused (issue 18), lowered on 8 host
devices; prints {name: module text} as JSON for test_jax_programs.py.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/partition/jax_programs.py
"""
from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

S, f32 = jax.ShapeDtypeStruct, jnp.float32
MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def lowered(f, args, specs):
    shardings = jax.tree.map(lambda p: NamedSharding(MESH, p), specs, is_leaf=lambda p: isinstance(p, P))
    return jax.jit(f, in_shardings=shardings).lower(*args).as_text()


def cnn(params, x):
    k1, k2 = params
    h = jax.nn.relu(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    h = lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (h ** 2).mean()


def merged_rows(x):
    x = lax.with_sharding_constraint(x, NamedSharding(MESH, P("data", None)))
    return jnp.exp(x).reshape(80)


def split_and_merged_rows(x):
    x = lax.with_sharding_constraint(x, NamedSharding(MESH, P("data", None)))
    return jnp.exp(jnp.exp(x).reshape(5, 16))


PROGRAMS = {
    # r33 F8: a constant offset on rows sharded on data.
    "dus_constant": (lambda x, u: lax.dynamic_update_slice(x, u, (2, 0)),
                     [S((16, 8), f32), S((2, 8), f32)], (P("data", None), P())),
    "dus_in_dim": (lambda x, u: lax.dynamic_update_slice_in_dim(x, u, 4, axis=0),
                   [S((16, 8), f32), S((4, 8), f32)], (P("data", "model"), P("data", None))),
    # the weight gradients of a conv net whose images are sharded on H and W, on H only
    "cnn_grad_hw": (jax.grad(cnn), [(S((3, 3, 3, 8), f32), S((3, 3, 8, 4), f32)), S((8, 16, 16, 3), f32)],
                    ((P(), P()), P("data", "model", None, None))),
    "cnn_grad_h": (jax.grad(cnn), [(S((3, 3, 3, 8), f32), S((3, 3, 8, 4), f32)), S((2, 16, 12, 3), f32)],
                   ((P(), P()), P(None, "data", None, None))),
    # 10 rows on 4 devices (padded to 12) merged to 80; split 5 x 2 and merged into 16
    "reshape_merged": (merged_rows, [S((10, 8), f32)], (P(),)),
    "reshape_split_merged": (split_and_merged_rows, [S((10, 8), f32)], (P(),)),
}

if __name__ == "__main__":
    print(json.dumps({name: lowered(f, args, specs) for name, (f, args, specs) in PROGRAMS.items()}))
