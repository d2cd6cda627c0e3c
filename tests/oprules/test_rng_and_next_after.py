"""Two ops JAX emits that sdylog refused as "unknown to SDY sharding rule
registry" though Shardy accepts them (r34's review, G8).

- `stablehlo.rng` (`jax.lax.rng_uniform`): Shardy's registry has no rule for
  it; the result takes its sharding from its users and no reshard is
  inserted. sdylog's rule (sdylog/oprules/linalg.py) leaves the numbers'
  factors free and the shape operand replicated: the same shardings and
  collectives as Shardy's. Per device, every device draws the whole shape
  (the shape operand stays global) and keeps its shard, as for
  rng_bit_generator's bits.
- `chlo.next_after` (`jnp.nextafter`): element-wise; XLA rewrites it into
  element-wise StableHLO before Shardy runs in a JAX compilation, so it takes
  the rule of a binary element-wise op (like sdylog's other chlo ops)."""
from __future__ import annotations

import pytest

from generators import shardy_differential as diff
from oprules_helpers import rule_text
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.ops.rng import draw
from tests.simulate.generated_simulations import simulated

import numpy as np

MESH = 'module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["x"=4, "y"=2]>\n'


def rng_module(shape, dims, etype="f32", distribution="UNIFORM", low="0.0", high="1.0") -> str:
    t = "x".join(map(str, shape))
    axes = ", ".join("{" + (f'"{a}"' if a else "") + "}" for a in dims)
    return MESH + f"""  func.func public @main(%arg0: tensor<{t}x{etype}> {{sdy.sharding = #sdy.sharding<@mesh, [{axes}]>}}) -> tensor<{t}x{etype}> {{
    %a = stablehlo.constant dense<{low}> : tensor<{etype}>
    %b = stablehlo.constant dense<{high}> : tensor<{etype}>
    %s = stablehlo.constant dense<[{", ".join(map(str, shape))}]> : tensor<{len(shape)}xi64>
    %r = stablehlo.rng %a, %b, %s, distribution = {distribution} : (tensor<{etype}>, tensor<{etype}>, tensor<{len(shape)}xi64>) -> tensor<{t}x{etype}>
    %0 = stablehlo.add %arg0, %r : tensor<{t}x{etype}>
    return %0 : tensor<{t}x{etype}>
  }}
}}"""


NEXT_AFTER = MESH + """  func.func public @main(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = chlo.next_after %x, %y : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}"""

PIPELINE = [diff.PIPELINE, "-sdy-insert-explicit-reshards=enable-full-version=true"]


@pytest.mark.skipif(diff.missing_reason() is not None, reason=diff.missing_reason() or "")
@pytest.mark.parametrize("case", [
    ([16, 8], ["x", "y"]), ([8, 4], ["x", None]), ([8, 4], [None, "y"]), ([6, 4], ["x", "y"])])
def test_rng_shardings_and_reshards_are_shardys(case):
    shape, dims = case
    result = diff.compare(rng_module(shape, dims), PIPELINE, reshards=True)
    assert result.full and result.values > 3, result.mismatches


def test_rng_rule_leaves_the_numbers_free():
    assert rule_text(rng_module([8, 4], ["x", None]), "stablehlo.rng") == \
        "#sdy.op_sharding_rule<([], [], [i])->([j, k]) {i=2, j=8, k=4} need_replication={i} blocked_propagation={i}>"


def test_rng_per_device_program_draws_the_whole_shape():
    out = optimize_text(rng_module([16, 8], ["x", "y"]), "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))
    assert "dense<[16, 8]> : tensor<2xi64>" in out, out
    assert "-> tensor<16x8xf32>" in out, out          # the whole shape drawn on every device
    assert "sizes = [4, 4] : (tensor<16x8xf32>" in out, out   # and this device's shard kept
    # (the only collective gathers the unsharded function result, after the add)
    assert out.count("stablehlo.all_gather\"") == 1 and out.index("stablehlo.add") < out.index("all_gather"), out


@pytest.mark.parametrize("case", [
    ([16, 8], ["x", "y"], "f32", "UNIFORM", "0.0", "1.0"),
    ([8, 4], [None, "x"], "f32", "NORMAL", "1.0", "2.0"),
    ([6, 5], ["x", "y"], "f32", "UNIFORM", "-1.0", "1.0"),     # not divisible: padded after drawing
    ([12], ["x"], "i32", "UNIFORM", "0", "100"),
    ([3, 8], ["y", "x"], "bf16", "NORMAL", "0.0", "1.0"),
])
def test_rng_simulate_matches(case):
    shape, dims, etype, distribution, low, high = case
    simulated(rng_module(shape, dims, etype, distribution, low, high), "rng.mlir")


def test_simulated_rng_numbers_are_deterministic_and_in_range():
    a = draw(np.float32(2), np.float32(3), "UNIFORM", (8, 4), np.float32)
    assert (a == draw(np.float32(2), np.float32(3), "UNIFORM", (8, 4), np.float32)).all()
    assert a.min() >= 2 and a.max() < 3 and len(np.unique(a)) > 16
    i = draw(np.int32(0), np.int32(5), "UNIFORM", (100,), np.int32)
    assert i.dtype == np.int32 and i.min() >= 0 and i.max() < 5
    n = draw(np.float32(10), np.float32(0.5), "NORMAL", (1000,), np.float32)
    assert 9.8 < n.mean() < 10.2 and 0.4 < n.std() < 0.6


def test_next_after_takes_a_binary_element_wise_rule():
    atan2 = NEXT_AFTER.replace("chlo.next_after %x, %y : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>",
                               "stablehlo.atan2 %x, %y : tensor<8x4xf32>")
    assert rule_text(NEXT_AFTER, "chlo.next_after") == rule_text(atan2, "stablehlo.atan2") is not None


def test_next_after_partitions_and_simulates():
    out = optimize_text(NEXT_AFTER, "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))
    assert "chlo.next_after %arg0, %" in out and "tensor<2x2xf32>" in out, out
    simulated(NEXT_AFTER, "next_after.mlir")
