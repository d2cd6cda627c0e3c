"""Top-k programs with the reduced dimension sharded (issue 18: `sdylog run
--partition` refused ApproxTopK's), lowered on 8 host devices; prints
{name: module text} as JSON for test_topk_programs.py.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python tests/partition/topk_programs.py
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
    shardings = tuple(NamedSharding(MESH, p) for p in specs)
    return jax.jit(f, in_shardings=shardings).lower(*args).as_text(debug_info=True)


PROGRAMS = {
    # issue 18's: rows on data, the reduced columns on model
    "approx_max_k": (lambda x: lax.approx_max_k(x, 4)[0], [S((8, 64), f32)], (P("data", "model"),)),
    "approx_max_k_indices": (lambda x: lax.approx_max_k(x, 4)[1], [S((8, 64), f32)], (P("data", "model"),)),
    # the reduced dimension on both axes; along dimension 0; of a 3-d operand
    "approx_min_k_all_axes": (lambda x: lax.approx_min_k(x, 3), [S((8, 64), f32)], (P(None, ("data", "model")),)),
    "approx_max_k_dim0": (lambda x: lax.approx_max_k(x, 2, reduction_dimension=0), [S((16, 6), f32)],
                          (P("data", "model"),)),
    "approx_max_k_3d": (lambda x: lax.approx_max_k(x, 4)[0] * 2, [S((4, 6, 32), f32)], (P("model", None, "data"),)),
    # not aggregated to top k (more than k results), and its gradient
    "approx_max_k_recall": (lambda x: lax.approx_max_k(x, 4, recall_target=0.5, aggregate_to_topk=False),
                            [S((8, 256), f32)], (P("data", "model"),)),
    "approx_max_k_grad": (jax.grad(lambda x: lax.approx_max_k(x, 3)[0].sum()), [S((8, 16), f32)],
                          (P("data", "model"),)),
    # chlo.top_k along a sharded dimension (one need-replication factor: the insert pass gathers it)
    "top_k": (lambda x: lax.top_k(x, 4), [S((8, 64), f32)], (P("data", "model"),)),
    "top_k_3d": (lambda x: lax.top_k(x, 2)[1], [S((4, 2, 16), f32)], (P("model", None, "data"),)),
    "top_k_grad": (jax.grad(lambda x: lax.top_k(x, 3)[0].sum()), [S((8, 16), f32)], (P("data", "model"),)),
    # keeping every element (k the dimension's size; not aggregated to top k, on CPU: the whole row
    # sorted): their rules make the sorted dimension a pass-through factor, which each device sorted
    # alone (ApproxTopK: wrong results; chlo.top_k: a per-device program that did not verify)
    "top_k_all": (lambda x: lax.top_k(x, 16), [S((8, 16), f32)], (P("data", "model"),)),
    "approx_max_k_all": (lambda x: lax.approx_max_k(x, 16), [S((8, 16), f32)], (P("data", "model"),)),
    "approx_max_k_not_aggregated": (lambda x: lax.approx_max_k(x, 2, recall_target=0.5, aggregate_to_topk=False),
                                    [S((8, 16), f32)], (P("data", "model"),)),
}

if __name__ == "__main__":
    print(json.dumps({name: lowered(f, args, specs) for name, (f, args, specs) in PROGRAMS.items()}))
