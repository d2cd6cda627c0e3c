"""Jitted functions of our own (MLP, attention, layer norm, a scan, a sharding
constraint) on 8 host
devices: sdylog.propagate(lowered).out_specs against the output shardings of
lowered.compile() (Shardy and XLA; with --gspmd, GSPMD lowering and XLA's
GSPMD partitioner).

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/api/jax_functions.py [--gspmd]

Prints one line per result (`name result: sdylog ... xla ... equal`) and,
last, `equal: K/N`. Two shardings are equal when they place the same
piece of the result on every device (jax's devices_indices_map), so the
GSPMD mesh's axis_0/axis_1 compare with data/model; the pieces `sdylog show`
draws (sdylog/partition/layout.py) must be those too.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402


def mlp(x, w1, w2):
    return jnp.tanh(jax.nn.relu(x @ w1) @ w2)


def attention(x, wq, wk, wv):
    q, k, v = x @ wq, x @ wk, x @ wv
    s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def scan(h0, xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum(-1)
    return jax.lax.scan(step, h0, xs)


def constrained(x, w):
    y = jax.lax.with_sharding_constraint(x @ w, P("model", P.UNCONSTRAINED))
    return jnp.sin(y).T


def cases(mesh):
    S = jax.ShapeDtypeStruct
    f32 = jnp.float32

    def ns(*spec):
        return NamedSharding(mesh, P(*spec))
    return {
        "mlp": (mlp, (S((32, 64), f32), S((64, 128), f32), S((128, 16), f32)),
                (ns("data", None), ns(None, "model"), ns())),
        "attention": (attention, (S((8, 16, 32), f32),) + (S((32, 32), f32),) * 3,
                      (ns("data"), ns(None, "model"), ns(None, "model"), ns(None, "model"))),
        "layer_norm": (layer_norm, (S((16, 32, 64), f32), S((64,), f32), S((64,), f32)),
                       (ns("data", "model"), ns(), ns())),
        "scan": (scan, (S((8, 32), f32), S((6, 8, 32), f32), S((32, 32), f32)),
                 (ns("data"), ns(None, "data"), ns())),
        "constraint": (constrained, (S((32, 64), f32), S((64, 128), f32)), (ns(), ns(None, "data"))),
    }


def placement(sharding, shape) -> dict:
    """device id -> the piece of the array it holds."""
    return {d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, shape))
            for d, idx in sharding.devices_indices_map(tuple(shape)).items()}


def ours_as_jax(value, mesh):
    """Our sharding of a result as a jax NamedSharding on a mesh of our axes
    over the same devices (mesh order = device order: the GSPMD mesh is iota)."""
    import numpy as np
    from jax.sharding import Mesh
    m = value.mesh
    devices = np.array(jax.devices()[:m.num_devices]).reshape([a.size for a in m.axes])
    ours = Mesh(devices, tuple(a.name for a in m.axes), axis_types=(AxisType.Auto,) * len(m.axes))
    return NamedSharding(ours, value.spec)


def pieces(value, mesh) -> dict:
    """sdylog's layout of a result (sdylog/partition/layout.py): the device
    at each logical position of the mesh -> its piece, as placement() reads."""
    from sdylog.partition.layout import layout
    lay = layout(value.shape, value.element, value.element_bytes, value.sharding, value.mesh)
    ids = [d.id for d in mesh.devices.flat]
    return {ids[p.device]: p.bounds for p in lay.pieces}


def main(gspmd: bool) -> int:
    import sdylog
    jax.config.update("jax_use_shardy_partitioner", not gspmd)
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    jax.sharding.set_mesh(mesh)    # (the constraint's bare PartitionSpec)
    equal = total = 0
    for name, (f, args, shardings) in cases(mesh).items():
        lowered = jax.jit(f, in_shardings=shardings).lower(*args)
        result = sdylog.propagate(lowered)
        theirs = jax.tree_util.tree_leaves(lowered.compile().output_shardings)
        for i, (value, xla) in enumerate(zip(result.outputs, theirs)):
            want = placement(xla, value.shape)
            same = placement(ours_as_jax(value, mesh), value.shape) == want == pieces(value, mesh)
            equal += same
            total += 1
            print(f"{name} {value.name}: sdylog {value.spec} xla {xla.spec} {'equal' if same else 'DIFFERENT'}")
    print(f"equal: {equal}/{total}")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main("--gspmd" in sys.argv))
