"""Reductions over a sharded dimension are finished with an all-reduce of
their own reducer (rules/partition/reduction_kind.dl), and replicated
values made unreduced keep their sum (convert's replicated_to_unreduced).

Each module runs through `simulate_text` (sdylog's partitioner pipeline, the
per-device program on every device, results compared with the global run);
with a sum all-reduce after a max-reduce, or an unlowered
`sdy.replicated_to_unreduced`, these fail (r31's report, items 2 and 6)."""
from __future__ import annotations

import pytest

from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

M2 = 'sdy.mesh @mesh = <["x"=2]>\n'
M22 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'


def reduce_module(body_op: str, init: str, etype: str = "f32", mesh: str = M22) -> str:
    return mesh + f"""func.func @main(%arg0: tensor<8x4x{etype}> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x", "y"}}, {{}}]>}}) -> tensor<4x{etype}> {{
  %c = stablehlo.constant dense<{init}> : tensor<{etype}>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.{body_op} across dimensions = [0] : (tensor<8x4x{etype}>, tensor<{etype}>) -> tensor<4x{etype}>
  return %0 : tensor<4x{etype}>
}}"""


REDUCES = {
    "max": reduce_module("maximum", "0xFF800000"),
    "min": reduce_module("minimum", "0x7F800000"),
    "prod": reduce_module("multiply", "1.0"),
    "int-max": reduce_module("maximum", "-2147483648", "i32"),
    "sum": reduce_module("add", "0.0"),
    # Partial maxima over "x", then the reduce of another reduce's result.
    "max-then-sum": M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<f32> {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}""",
    # Scatter-max with updates sharded along their scatter dimension (jax.ops.segment_max).
    "segment-max": M2 + """func.func @main(%ids: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %upd: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x3xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<4x3xf32>
  %idx = stablehlo.reshape %ids : (tensor<8xi32>) -> tensor<8x1xi32>
  %0 = "stablehlo.scatter"(%init, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x3xf32>, tensor<8x1xi32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(REDUCES))
def test_reduction_over_sharded_dim_matches_global(name):
    report = simulate_text(REDUCES[name], f"{name}.mlir", seed=3)
    assert report.ok, report.text()


@pytest.mark.parametrize("name,body", [("max", "stablehlo.maximum"), ("min", "stablehlo.minimum"),
                                       ("prod", "stablehlo.multiply"), ("sum", "stablehlo.add")])
def test_all_reduce_body_is_the_reducer(name, body):
    out = optimize_text(REDUCES[name], "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))
    after = out.split('"stablehlo.all_reduce"', 1)[1].split("stablehlo.return", 1)[0]
    assert body in after, out


ARGMAX = M2 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4xf32>, tensor<4xi32>) {
  %iota = stablehlo.iota dim = 0 : tensor<8x4xi32>
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%arg0 init: %c), (%iota init: %ci) across dimensions = [0] : (tensor<8x4xf32>, tensor<8x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
}"""


def test_argmax_over_sharded_dim_matches_global():
    """No all-reduce body combines (value, index) pairs: the pairs are
    gathered and reduced again (tests/simulate/test_unreduced_and_regathered.py),
    not summed, nor refused."""
    report = simulate_text(ARGMAX, "argmax.mlir", seed=1)
    assert report.ok, report.text()


def test_variadic_reduce_of_independent_maxima_matches_global():
    """A variadic reduce whose body combines each tensor on its own takes one kind per result."""
    text = M2 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0:2 = stablehlo.reduce(%arg0 init: %c), (%arg1 init: %z) across dimensions = [0] : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c2: tensor<f32>, %d: tensor<f32>) {
    %m = stablehlo.maximum %b, %a : tensor<f32>
    %s = stablehlo.add %c2, %d : tensor<f32>
    stablehlo.return %m, %s : tensor<f32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}"""
    report = simulate_text(text, "v.mlir", seed=2)
    assert report.ok, report.text()


UNREDUCED = {
    # negate of a value returned unreduced on "x" (insert-explicit-reshards writes replicated_to_unreduced)
    "r2u": M22 + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}], unreduced={"x"}>}) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}""",
    # a dot kept unreduced, used (an all-reduce first), returned unreduced
    "dot-unreduced": M22 + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}], unreduced={"x"}>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}""",
    # a scalar made unreduced on both axes
    "scalar": M22 + """func.func @main(%arg0: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"x", "y"}>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : tensor<i32>
  return %0 : tensor<i32>
}""",
}


@pytest.mark.parametrize("name", sorted(UNREDUCED))
def test_replicated_to_unreduced_matches_global(name):
    report = simulate_text(UNREDUCED[name], f"{name}.mlir", seed=5)
    assert report.ok, report.text()


def test_replicated_to_unreduced_keeps_the_value_on_the_first_device_of_each_group():
    text = M22 + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}], unreduced={"y"}>}) {
  %0 = sdy.replicated_to_unreduced {"y"} %arg0 out_sharding=<@mesh, [{"x"}], unreduced={"y"}> : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = optimize_text(text, "t.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    # devices (x, y) = 0:(0,0) 1:(0,1) 2:(1,0) 3:(1,1): y = 0 keeps it
    assert "dense<[true, false, true, false]> : tensor<4xi1>" in out
    assert "sdy.replicated_to_unreduced" not in out


def test_reduce_scatter_of_partial_maxima_matches_global():
    """An sdy.reduce_scatter finishing a max-reduce scatters maxima (a module as written)."""
    text = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = sdy.reduce_scatter [{"x"}] %0 out_sharding=<@mesh, [{"x"}]> : tensor<4xf32>
  return %1 : tensor<4xf32>
}"""
    report = simulate_text(text, "rs.mlir", seed=4, explicit=True)
    assert report.ok, report.text()
