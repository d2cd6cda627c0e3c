"""The halo path of -sdy-resolve-permutation-factors (enable-halo-exchange,
the default of `sdylog run --partition` and `sdylog simulate`) on slices and
pads (/work/rev31 REPORT.md section 1): a strided slice is not taken (its
factors are cleared, as jaxlib's Shardy does), and every slice or pad it
takes gives the global result: a dimension whose shards need no neighbour
but sit at another offset, or with another size, is cut too."""
from __future__ import annotations

import pytest

from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

HALO = ["--sdy-propagation-pipeline", "--sdy-insert-explicit-reshards=enable-full-version=true",
        "--sdy-resolve-permutation-factors=enable-halo-exchange=true"]

# x[0:8:2] of a dimension sharded on "x"=2 (/work/rev31/strided_slice.mlir):
# the halo path cut contiguous windows, dropping the stride.
STRIDED = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
  %0 = stablehlo.slice %arg0 [0:8:2] : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
# x[1::3, ::2]-like: a stride on a replicated dimension next to a halo on a sharded one.
STRIDED_REPLICATED_DIM = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.slice %arg0 [1:7, 0:8:2] : (tensor<8x8xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}"""
# x[2:6] of 8 on "x"=2 (/work/rev31/slice_aligned.mlir): each device's window
# lies in its own shard, at another offset on each: no exchange, but a cut.
ALIGNED = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
  %0 = stablehlo.slice %arg0 [2:6] : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
# That in one dimension and a real exchange in the other (/work/rev31/slice2d_halo.mlir,
# pad2d_halo.mlir): the manual computation's result had the operand's local size.
SLICE_2D = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.slice %arg0 [2:6, 1:5] : (tensor<8x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}"""
PAD_2D = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<10x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %arg0, %c, low = [1, 0], high = [1, -2], interior = [0, 0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<10x6xf32>
  return %0 : tensor<10x6xf32>
}"""
# A pad whose sharded dimension keeps its shards but grows (8 -> 10 on 2
# shards, a non-zero pad value): each device pads its own block its way.
PAD_GROWS = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<10x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %c = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.pad %arg0, %c, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}"""


def test_a_strided_slice_of_a_sharded_dimension_is_replicated_around():
    out = optimize_text(STRIDED, "t.mlir", parse_flags(HALO))
    assert "manual_computation" not in out
    assert 'sdy.reshard %arg0 <@mesh, [{}]>' in out
    assert 'stablehlo.slice %0 [0:8:2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>}' in out


def test_a_slice_aligned_in_each_shard_takes_the_halo_path():
    out = optimize_text(ALIGNED, "t.mlir", parse_flags(HALO))
    assert "manual_computation" in out and "dynamic_slice" in out
    assert "collective_permute" not in out     # no device needs another's data


# PAD_2D with interior padding on the exchanged dimension and a pad value other than 0.
PAD_2D_VALUE = PAD_2D.replace("dense<0.0>", "dense<1.5>").replace("interior = [0, 0]", "interior = [0, 1]").replace(
    "10x6xf32", "10x13xf32")


@pytest.mark.parametrize("text", [STRIDED, STRIDED_REPLICATED_DIM, ALIGNED, SLICE_2D, PAD_2D, PAD_2D_VALUE, PAD_GROWS],
                         ids=["strided", "strided_replicated_dim", "aligned", "slice_2d", "pad_2d", "pad_2d_value",
                              "pad_grows"])
def test_the_halo_path_computes_the_global_result(text):
    report = simulate_text(text, "t.mlir", seed=3)
    assert report.ok, report


@pytest.mark.parametrize("text", [STRIDED, ALIGNED, SLICE_2D, PAD_2D])
def test_without_halo_exchange_the_same(text):
    assert simulate_text(text, "t.mlir", seed=3, halo_exchange=False).ok
