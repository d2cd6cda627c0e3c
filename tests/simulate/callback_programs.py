"""JAX programs with host callbacks in a sharded jit, lowered on 8 host
devices with their debug locations, and what XLA compiles of each callback;
prints {name: {"mlir": module text, "xla": [callback, ...]}} as JSON for
test_host_callbacks.py, a callback being {"operand_shapes": [...],
"guarded": whether it sits in a conditional's branch, "partition_id":
whether the program reads partition-id}.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/simulate/callback_programs.py
"""
from __future__ import annotations

import json
import os
import re

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.experimental import io_callback  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

S, f32 = jax.ShapeDtypeStruct, jnp.float32
MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def mlp(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    jax.debug.print("h {}", h)
    return h @ w2


def padded(x):
    # 15 rows on 4 devices: padded to 16 by the partitioner
    x = lax.with_sharding_constraint(x[1:], NamedSharding(MESH, P("data", "model")))
    jax.debug.print("x {}", x * 2)
    return x + 1


def in_scan(xs):
    def body(c, r):
        c = c + r
        jax.debug.print("c {}", c)
        return c, c * 2
    return lax.scan(body, jnp.zeros(xs.shape[1:]), xs)


def io_without_result(x):
    io_callback(lambda v: None, None, x.sum(axis=0))
    return x * 3


def pure(x):
    y = jax.pure_callback(lambda v: np.asarray(v) * 2, S(x.shape, x.dtype), x)
    return y + 1


def pure_in_scan(xs):
    # the callback's result is a scan output: the closed_call JAX makes of the
    # body returns it, replicated (propagate-to-func-results leaves device 0's
    # maximal mesh off a callee's result); simulate refuses the callback
    def body(c, r):
        return c + r, jax.pure_callback(lambda v: np.asarray(v) * 2, S(r.shape, r.dtype), r)  # PURE_IN_SCAN
    return lax.scan(body, jnp.zeros(xs.shape[1:]), xs)


PROGRAMS = {
    "mlp": (mlp, [S((16, 8), f32), S((8, 32), f32), S((32, 4), f32)], (P("data", None), P(None, "model"),
                                                                      P("model", None))),
    "padded": (padded, [S((16, 8), f32)], (P("data", "model"),)),
    "in_scan": (in_scan, [S((4, 16, 8), f32)], (P(None, "data", "model"),)),
    "io_without_result": (io_without_result, [S((16, 8), f32)], (P("data", "model"),)),
    "pure": (pure, [S((16, 8), f32)], (P("data", "model"),)),
    "pure_in_scan": (pure_in_scan, [S((4, 16, 8), f32)], (P(None, "data", "model"),)),
}


def xla_callbacks(hlo: str) -> list[dict]:
    """The host callbacks of XLA's compiled (per-device) HLO text."""
    branches = set(re.findall(r"true_computation=%([\w.\-]+)", hlo))
    out, computation = [], None
    for line in hlo.splitlines():
        head = re.match(r"(?:ENTRY )?%([\w.\-]+) \(", line)
        if head and line.endswith("{"):
            computation = head[1]
        if 'custom_call_target="xla_ffi_python_cpu_callback"' in line:
            layouts = re.search(r"operand_layout_constraints=\{(.*?)\}, ", line)
            shapes = re.findall(r"[a-z0-9]+\[([0-9,]*)\]", layouts[1]) if layouts else []
            out.append({"operand_shapes": [[int(n) for n in s.split(",") if n] for s in shapes],
                        "guarded": computation in branches, "partition_id": "partition-id()" in hlo})
    return out


if __name__ == "__main__":
    programs = {}
    for name, (f, args, specs) in PROGRAMS.items():
        shardings = tuple(NamedSharding(MESH, p) for p in specs)
        lowered = jax.jit(f, in_shardings=shardings).lower(*args)
        programs[name] = {"mlir": lowered.as_text(debug_info=True),
                          "xla": xla_callbacks(lowered.compile().as_text())}
    print(json.dumps(programs))
