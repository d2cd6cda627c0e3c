"""Convolutions whose window is larger than the windows they make, on a
sharded spatial dimension (issue 18: convert-global-to-local refused them,
"dimension 1 is sharded but is not a pass-through dimension"), lowered on 8
host devices; prints {name: {"text": module text, "xla": the collective
kinds of XLA's compiled per-device program}} as JSON for
test_conv_window_programs.py.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/partition/conv_window_programs.py
"""
from __future__ import annotations

import json
import os
import re

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

S, f32 = jax.ShapeDtypeStruct, jnp.float32
MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
COLLECTIVES = ("all-gather", "all-reduce", "collective-permute", "all-to-all", "reduce-scatter")


def conv(x, k, stride=1, padding="SAME"):
    return lax.conv_general_dilated(x, k, (stride, 1), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))


def residual(x, k):
    """A convolution added to its input: its result sharded as its input."""
    return conv(x, k) + x


def two_layers(x, k):
    """conv(relu(conv(x))) with the padding of the first on one side."""
    c = lambda x: conv(x, k, padding=((2, 0), (0, 0)))  # noqa: E731
    return c(jax.nn.relu(c(x)))


PROGRAMS = {
    # H in blocks of 1 row, kernels of 5 and 7 rows: the halo would span more than the neighbours
    "residual_h4_k5": (residual, [S((2, 4, 3, 2), f32), S((5, 1, 2, 2), f32)], (P(None, "data"), P())),
    "residual_h4_k7": (residual, [S((2, 4, 3, 2), f32), S((7, 1, 2, 2), f32)], (P(None, "data"), P())),
    # H on model in blocks of 1, a kernel of 3 rows; H on data and W on model
    "residual_h2_k3": (residual, [S((2, 2, 3, 2), f32), S((3, 1, 2, 2), f32)], (P(None, "model"), P())),
    "residual_hw_k7": (residual, [S((2, 8, 4, 2), f32), S((7, 1, 2, 2), f32)], (P(None, "data", "model"), P())),
    # gradients (input and kernel) of the residual and of two layers
    "residual_grad_h4_k5": (jax.grad(lambda x, k: (residual(x, k) ** 2).sum(), argnums=(0, 1)),
                            [S((2, 4, 3, 2), f32), S((5, 1, 2, 2), f32)], (P(None, "data"), P())),
    "two_layers_grad_h2_k3": (jax.grad(lambda x, k: (two_layers(x, k) ** 2).sum(), argnums=(0, 1)),
                              [S((2, 2, 3, 2), f32), S((3, 1, 2, 2), f32)], (P(None, "model"), P())),
    # strided, 3 rows out of 8 on 4 devices (padded to 4)
    "residual_strided": (lambda x, k: conv(x, k, stride=3) + x[:, ::3], [S((2, 8, 3, 2), f32), S((5, 1, 2, 2), f32)],
                         (P(None, "data"), P())),
    # no window at all: a second stride-2 layer of 5 rows on the first's one row (pad-for-divisibility
    # counted -1 windows), a 13-row dilated window on 8 rows of one row each (an internal error)
    "empty_second_layer": (lambda x, k: conv(jax.nn.relu(conv(x, k, 2, "VALID")), k, 2, "VALID"),
                           [S((2, 6, 3, 2), f32), S((5, 1, 2, 2), f32)], (P(None, "model"), P())),
    "empty_dilated": (lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "VALID", rhs_dilation=(2, 1),
                                                            dimension_numbers=("NHWC", "HWIO", "NHWC")),
                      [S((2, 8, 3, 2), f32), S((7, 1, 2, 2), f32)], (P(None, ("data", "model")), P())),
}


def xla_collectives(compiled_text: str) -> list[str]:
    """The kinds of collective XLA's compiled program runs, sorted."""
    return sorted({kind for kind in COLLECTIVES if re.search(rf"\b{kind}(-start)?\(", compiled_text)})


def lowered(f, args, specs):
    shardings = tuple(NamedSharding(MESH, p) for p in specs)
    jitted = jax.jit(f, in_shardings=shardings).lower(*args)
    return {"text": jitted.as_text(debug_info=True), "xla": xla_collectives(jitted.compile().as_text())}


if __name__ == "__main__":
    print(json.dumps({name: lowered(f, args, specs) for name, (f, args, specs) in PROGRAMS.items()}))
