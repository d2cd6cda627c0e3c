"""`sdylog simulate` and `run --partition` on values inside regions: a while
loop's carry reshuffled by a collective_permute, and shard_maps nested in
shard_maps (the unpartitioned run slices and assembles each level)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.module import parse_module
from sdylog.partition import ir_shardings as irs

WHILE_PERMUTE = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %it = %arg0) : tensor<i32>, tensor<16xf32>
  cond {
    %p = stablehlo.compare LT, %i, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %r = sdy.reshard %it <@mesh, [{"y":(2)2, "y":(1)2}]> : tensor<16xf32>
    %e = stablehlo.exponential %r : tensor<16xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %e : tensor<i32>, tensor<16xf32>
  }
  return %w#1 : tensor<16xf32>
}"""

# The same reshuffle in a branch of a case and in a called function (these
# passed before: their block arguments are none, or a function's).
CASE_PERMUTE = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%p: tensor<i32>, %arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  %0 = "stablehlo.case"(%p) ({
    %r = sdy.reshard %arg0 <@mesh, [{"y":(2)2, "y":(1)2}]> : tensor<16xf32>
    %e = stablehlo.exponential %r : tensor<16xf32>
    stablehlo.return %e : tensor<16xf32>
  }, {
    stablehlo.return %arg0 : tensor<16xf32>
  }) : (tensor<i32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}"""

CALL_PERMUTE = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  %0 = func.call @f(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func private @f(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %r = sdy.reshard %arg0 <@mesh, [{"y":(2)2, "y":(1)2}]> : tensor<16xf32>
  %e = stablehlo.exponential %r : tensor<16xf32>
  return %e : tensor<16xf32>
}"""

# JAX's shard_map over "data" holding a shard_map over "model" with a psum.
NESTED_PSUM = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<16x4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"data", ?}, {?}]>] out_shardings=[<@mesh, [{"data", ?}, {?}]>] manual_axes={"data"} (%arg1: tensor<4x8xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{?}, {"model", ?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"model"} (%arg2: tensor<4x4xf32>) {
      %6 = "stablehlo.all_reduce"(%arg2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
        %9 = stablehlo.add %arg3, %arg4 : tensor<f32>
        stablehlo.return %9 : tensor<f32>
      }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
      %8 = stablehlo.multiply %6, %7 : tensor<4x4xf32>
      sdy.return %8 : tensor<4x4xf32>
    } : (tensor<4x8xf32>) -> tensor<4x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {?}]> : tensor<4x4xf32>
    %4 = stablehlo.add %1, %3 : tensor<4x4xf32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{?}, {?}]> : tensor<4x4xf32>
    sdy.return %5 : tensor<4x4xf32>
  } : (tensor<16x8xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}"""

# The inner shard_map adds 0..3 to each of its column blocks (of its axis "y")
# and returns its result sharded on "y": the unpartitioned run slices its
# operand on "y" and assembles the result from the devices along "y".
NESTED_GATHER = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"y"} (%arg2: tensor<4x4xf32>) {
      %e = stablehlo.exponential %arg2 : tensor<4x4xf32>
      %c = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
      %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
      %2 = stablehlo.add %e, %b : tensor<4x4xf32>
      sdy.return %2 : tensor<4x4xf32>
    } : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = stablehlo.negate %1 : tensor<4x8xf32>
    sdy.return %4 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}"""


def invoke(args, tmp_path, text, name="t.mlir"):
    path = tmp_path / name
    path.write_text(text)
    return CliRunner().invoke(main, [args[0], str(path), *args[1:]])


def test_while_carry_sharding_is_the_while_results():
    from jaxlib.mlir import ir
    module = parse_module(WHILE_PERMUTE, "t.mlir")
    with module.context:
        func = module.body.operations[1]
        while_op = next(op for op in func.regions[0].blocks[0].operations if op.operation.name == "stablehlo.while")
        while_op.operation.attributes["sdy.sharding"] = ir.Attribute.parse(
            '#sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"y"}]>]>')
        for region in while_op.regions:
            i, it = region.blocks[0].arguments
            assert irs.sharding_of(i).dims == ()
            assert [a.name for a in irs.sharding_of(it).dims[0].axes] == ["y"]


def test_partition_a_collective_permute_of_a_while_carry(tmp_path):
    r = invoke(["run", "--partition"], tmp_path, WHILE_PERMUTE)
    assert r.exit_code == 0, r.output + r.stderr
    assert r.output.count('"stablehlo.collective_permute"') == 2
    assert "tensor<4xf32>" in r.output and "tensor<16xf32>" not in r.output


@pytest.mark.parametrize("text", [WHILE_PERMUTE, CASE_PERMUTE, CALL_PERMUTE, NESTED_PSUM, NESTED_GATHER],
                         ids=["while_permute", "case_permute", "call_permute", "nested_psum", "nested_gather"])
def test_simulate_matches(tmp_path, text):
    r = invoke(["simulate", "--json"], tmp_path, text)
    assert r.exit_code == 0, r.output + r.stderr
    report = json.loads(r.output)
    assert report["match"], report
    assert r.stderr == ""


def _reference(text, shape):
    from sdylog.simulate.mesh import CollectiveStats
    from sdylog.simulate.program import DeviceRuntime, Program
    module = parse_module(text, "t.mlir")
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 64
    with module.context:
        (out,) = Program(module, "t.mlir").run("main", [x], DeviceRuntime(stats=CollectiveStats()))
    return x, out


def test_unpartitioned_run_of_nested_shard_maps():
    """psum over "model" of the two column halves, doubled, plus one."""
    x, out = _reference(NESTED_PSUM, (16, 8))
    np.testing.assert_allclose(out, 2 * (x[:, :4] + x[:, 4:]) + 1, rtol=1e-6)


def test_unpartitioned_run_of_nested_shard_maps_assembles_inner_results():
    x, out = _reference(NESTED_GATHER, (8, 8))
    np.testing.assert_allclose(out, -(np.exp(x) + np.arange(8) % 4), rtol=1e-6)
