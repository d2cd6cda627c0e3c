"""`sdylog simulate` on shard_maps (sdy.manual_computation) whose in or out
shardings are unreduced on manual axes: a partial sum there (Shardy's
TensorShardingAttr). The unpartitioned run adds up the devices' values of a
result unreduced on an axis, and gives an operand unreduced on one to the
first device of each group along it, zeros to the others (rev33 F4: it took
one device's partial sum as the whole, a MISMATCH on correct programs that
JAX, on 8 CPU devices, computes as the sum)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.module import parse_module

# A partial dot per device of "x", returned unreduced on "x", then replicated
# (rev33 mc_unred.mlir): x @ w.
OUT_UNREDUCED = """sdy.mesh @mesh = <["x"=2]>
func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {}], unreduced={"x"}>] manual_axes={"x"} (%a: tensor<8x4xf32>, %b: tensor<4x4xf32>) {
    %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    sdy.return %d : tensor<8x4xf32>
  } : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}]> : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}"""

# JAX's `reshard(shard_map(lambda a, b: a @ b, in_specs=(P("data", "model"),
# P("model", None)), out_specs=P("data", None, unreduced={"model"}))(x, w),
# P("data", None)) * 2` (rev33 jxe/ex_sm_unred_out2.mlir, minimized): 2 x @ w.
OUT_UNREDUCED_2D = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{"model"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}], unreduced={"model"}>] manual_axes={"data", "model"} (%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) {
    %6 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    sdy.return %6 : tensor<4x4xf32>
  } : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {}]> : tensor<16x4xf32>
  %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
  %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x4xf32>
  %3 = stablehlo.multiply %1, %2 : tensor<16x4xf32>
  return %3 : tensor<16x4xf32>
}"""

# The same returned unreduced (rev33 jxe/ex_sm_unred_out.mlir): x @ w.
OUT_UNREDUCED_RETURNED = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}], unreduced={"model"}>}) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{"model"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}], unreduced={"model"}>] manual_axes={"data", "model"} (%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) {
    %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    sdy.return %1 : tensor<4x4xf32>
  } : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}"""

# An unreduced dot fed to a shard_map with `in_specs=P("data", None,
# unreduced={"model"})` whose body psums over "model" and doubles (rev33
# jxe/ex_sm_unred_in.mlir): 2 x @ w (the body's psum adds partial sums).
IN_UNREDUCED = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {}], unreduced={"model"}> : tensor<16x4xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"data"}, {}], unreduced={"model"}>] out_shardings=[<@mesh, [{"data"}, {}]>] manual_axes={"data", "model"} (%a: tensor<4x4xf32>) {
    %3 = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<4x4xf32>
    sdy.return %5 : tensor<4x4xf32>
  } : (tensor<16x4xf32>) -> tensor<16x4xf32>
  return %2 : tensor<16x4xf32>
}"""

# Nested: a shard_map over "x" holding one over "y" whose partial dot is
# returned unreduced on "y", then negated: -(x @ w).
NESTED_OUT_UNREDUCED = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
    %1 = sdy.manual_computation(%a, %b) in_shardings=[<@mesh, [{}, {"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{}, {}], unreduced={"y"}>] manual_axes={"y"} (%c: tensor<4x4xf32>, %d: tensor<4x4xf32>) {
      %2 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %2 : tensor<4x4xf32>
    } : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.negate %1 : tensor<4x4xf32>
    sdy.return %3 : tensor<4x4xf32>
  } : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""

# Nested: the inner shard_map takes a value unreduced on "y" and psums it
# over "y", then negated: -x.
NESTED_IN_UNREDUCED = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x4xf32>) {
    %1 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"y"} (%c: tensor<4x4xf32>) {
      %2 = "stablehlo.all_reduce"(%c) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %s = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %2 : tensor<4x4xf32>
    } : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.negate %1 : tensor<4x4xf32>
    sdy.return %3 : tensor<4x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""

CASES = {"out_unreduced": OUT_UNREDUCED, "out_unreduced_2d": OUT_UNREDUCED_2D,
         "out_unreduced_returned": OUT_UNREDUCED_RETURNED, "in_unreduced": IN_UNREDUCED,
         "nested_out_unreduced": NESTED_OUT_UNREDUCED, "nested_in_unreduced": NESTED_IN_UNREDUCED}


def _reference(text, *shapes):
    """The unpartitioned run on inputs 0, 1/64, 2/64, ... (one device)."""
    from sdylog.simulate.mesh import CollectiveStats
    from sdylog.simulate.program import DeviceRuntime, Program
    module = parse_module(text, "t.mlir")
    xs = [np.arange(np.prod(s), dtype=np.float32).reshape(s) / 64 for s in shapes]
    with module.context:
        (out,) = Program(module, "t.mlir").run("main", xs, DeviceRuntime(stats=CollectiveStats()))
    return xs, out


@pytest.mark.parametrize("name, shapes, want", [
    ("out_unreduced", [(8, 8), (8, 4)], lambda x, w: x @ w),
    ("out_unreduced_2d", [(16, 8), (8, 4)], lambda x, w: 2 * (x @ w)),
    ("out_unreduced_returned", [(16, 8), (8, 4)], lambda x, w: x @ w),
    ("in_unreduced", [(16, 8), (8, 4)], lambda x, w: 2 * (x @ w)),
    ("nested_out_unreduced", [(8, 8), (8, 4)], lambda x, w: -(x @ w)),
    ("nested_in_unreduced", [(8, 4)], lambda x: -x),
])
def test_unpartitioned_run_sums_unreduced_manual_values(name, shapes, want):
    xs, out = _reference(CASES[name], *shapes)
    np.testing.assert_allclose(out, want(*xs), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_simulate_matches(tmp_path, name):
    path = tmp_path / f"{name}.mlir"
    path.write_text(CASES[name])
    r = CliRunner().invoke(main, ["simulate", str(path), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and report["first_difference"] is None, report
