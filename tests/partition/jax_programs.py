"""JAX programs the partitioner once refused (issue 18 and after), lowered on 8 host
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


def conv(x, k, strides=(1, 1), padding="SAME", lhs_dilation=(1, 1), groups=1):
    return lax.conv_general_dilated(x, k, strides, padding, lhs_dilation=lhs_dilation,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=groups)


def weight_grad(**kw):
    """The gradient of a convolution's squares with respect to its kernel."""
    return jax.grad(lambda k, x: (conv(x, k, **kw) ** 2).sum())


def strided_double_grad(k, x):
    """The kernel gradient of the input gradient of a stride-2 convolution
    (whose convolution dilates its input by 2)."""
    dx = jax.grad(lambda x, k: (conv(x, k, strides=(2, 2)) ** 2).sum())
    return jax.grad(lambda k: (dx(x, k) ** 2).sum())(k)


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
    # kernel gradients with the images sharded on H or W (was refused: not a pass-through dimension):
    # of a transposed convolution (its input dilated by 2), of the input gradient of a strided one,
    # of a grouped one (batch_group_count 4 in the gradient) with its output features on model, of a
    # depthwise one with its channels on model
    "transposed_conv_grad_h": (weight_grad(padding=((1, 1), (1, 1)), lhs_dilation=(2, 2)),
                               [S((3, 3, 4, 4), f32), S((2, 8, 8, 4), f32)], (P(), P(None, "data", None, None))),
    "strided_double_grad_w": (strided_double_grad, [S((3, 3, 4, 4), f32), S((2, 16, 16, 4), f32)],
                              (P(), P(None, None, "data", None))),
    "grouped_conv_grad_h": (weight_grad(strides=(2, 2), groups=4), [S((3, 3, 2, 8), f32), S((2, 16, 16, 8), f32)],
                            (P(None, None, None, "model"), P(None, "data", None, None))),
    "depthwise_conv_grad_w": (weight_grad(groups=8), [S((3, 3, 1, 8), f32), S((2, 16, 16, 8), f32)],
                              (P(None, None, None, "model"), P(None, None, "data", None))),
    # 10 rows on 4 devices (padded to 12) merged to 80; split 5 x 2 and merged into 16
    "reshape_merged": (merged_rows, [S((10, 8), f32)], (P(),)),
    "reshape_split_merged": (split_and_merged_rows, [S((10, 8), f32)], (P(),)),
}

if __name__ == "__main__":
    print(json.dumps({name: lowered(f, args, specs) for name, (f, args, specs) in PROGRAMS.items()}))
