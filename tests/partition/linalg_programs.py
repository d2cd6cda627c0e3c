"""JAX linear algebra in sharded jits (CPU: LAPACK custom calls with a
`custom` sharding rule and `num_batch_dims`), lowered on 8 host devices
with their debug locations, and the per-device shapes XLA compiles each
LAPACK call to; prints {name: {"mlir": module text, "xla": [call, ...]}} as
JSON for test_custom_rule_calls.py, a call being {"target": ...,
"operand_shapes": [...], "result_shapes": [...]} in program order.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/partition/linalg_programs.py
"""
from __future__ import annotations

import json
import os
import re

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

S, f32 = jax.ShapeDtypeStruct, jnp.float32
MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
MESH8 = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))


def trisolve(a, b):
    return jax.scipy.linalg.solve_triangular(a, b, lower=True)


# name: (function, argument types, in_shardings, out_shardings or None, mesh)
PROGRAMS = {
    # the rows of the triangular matrix over "model": each device needs all of them
    "trisolve_rows": (trisolve, [S((8, 8, 8), f32), S((8, 8, 4), f32)], (P("data", "model"), P("data")), None, MESH),
    # the right-hand sides split over "model" (b is aliased to the result)
    "trisolve_rhs": (trisolve, [S((8, 8, 8), f32), S((8, 8, 4), f32)], (P("data"), P("data", None, "model")), None,
                     MESH),
    # the batch dimension only: stays sharded, no collective
    "trisolve_batch": (trisolve, [S((8, 8, 8), f32), S((8, 8, 4), f32)], (P("data"), P("data")), None, MESH),
    "cholesky_rows": (jnp.linalg.cholesky, [S((8, 8, 8), f32)], (P("data", "model"),), None, MESH),
    "cholesky_out": (jnp.linalg.cholesky, [S((8, 8, 8), f32)], (P("data"),), P("data", "model"), MESH),
    "eigh_rows": (lambda a: jnp.linalg.eigh(a)[1], [S((8, 4, 4), f32)], (P("data", "model"),), None, MESH),
    "inv_rows": (jnp.linalg.inv, [S((8, 8, 8), f32)], (P("data", "model"),), None, MESH),
    # no batch dimension: every dimension replicated
    "inv_2d": (lambda a: jnp.linalg.inv(a) @ a, [S((8, 8), f32)], (P("x"),), None, MESH8),
    "tridiagonal_rhs": (jax.lax.linalg.tridiagonal_solve, [S((8, 6), f32)] * 3 + [S((8, 6, 2), f32)],
                        (P("data"), P("data"), P("data"), P("data", None, "model")), None, MESH),
}

SHAPE = r"[a-z0-9]+\[([0-9,]*)\]"


def dims(shape: str) -> list[int]:
    return [int(n) for n in shape.split(",") if n]


def xla_lapack_calls(hlo: str) -> list[dict]:
    """The LAPACK custom calls of XLA's compiled (per-device) HLO text."""
    calls = []
    for line in hlo.splitlines():
        target = re.search(r'custom_call_target="(lapack_\w+)"', line)
        if not target:
            continue
        result = re.match(r"\s*(?:ROOT )?%[\w.\-]+ = (.*?) custom-call\(", line)[1]
        operands = re.search(r"operand_layout_constraints=\{((?:[^{}]|\{[^{}]*\})*)\}", line)[1]
        calls.append({"target": target[1], "operand_shapes": [dims(s) for s in re.findall(SHAPE, operands)],
                      "result_shapes": [dims(s) for s in re.findall(SHAPE, result)]})
    return calls


if __name__ == "__main__":
    programs = {}
    for name, (f, args, in_specs, out_spec, mesh) in PROGRAMS.items():
        kw = {"in_shardings": tuple(NamedSharding(mesh, p) for p in in_specs)}
        if out_spec is not None:
            kw["out_shardings"] = NamedSharding(mesh, out_spec)
        lowered = jax.jit(f, **kw).lower(*args)
        programs[name] = {"mlir": lowered.as_text(debug_info=True),
                          "xla": xla_lapack_calls(lowered.compile().as_text())}
    print(json.dumps(programs))
