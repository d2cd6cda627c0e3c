"""-sdy-pad-for-divisibility on a reduce over a padded dimension and on a
slice strided on another dimension (r32 items 3 and 4): the partitioned
program computes the global result."""
from __future__ import annotations

import pytest

from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

M4 = 'sdy.mesh @mesh = <["x"=4]>\n'

# 6 of 8 elements on 4 shards: the slice result is padded to 8 (device 3
# keeps a[6], a[7] as its padding), and the sum must not count them.
SLICE_SUM = M4 + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<f32> {
  %s = stablehlo.slice %a [0:6] : (tensor<8xf32>) -> tensor<6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}'''

# A max over rows 0..5 of an iota padded to 8 rows: its padding holds rows
# 6 and 7 (larger); masked with the init (-inf), the max is 5.
SLICE_MAX = M4 + '''
func.func @main(%a: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<3xf32> {
  %i = stablehlo.iota dim = 0 : tensor<8x3xf32>
  %v = stablehlo.add %i, %a : tensor<8x3xf32>
  %w = stablehlo.subtract %v, %a : tensor<8x3xf32>
  %s = stablehlo.slice %w [0:6, 0:3] : (tensor<8x3xf32>) -> tensor<6x3xf32>
  %mx = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %r = stablehlo.reduce(%s init: %mx) applies stablehlo.maximum across dimensions = [0] : (tensor<6x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}'''

# The padded slice goes through a while loop before the sums.
WHILE_SUM = M4 + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %one = stablehlo.constant dense<1.0> : tensor<6xf32>
  %s = stablehlo.slice %a [0:6] : (tensor<8xf32>) -> tensor<6xf32>
  %w:2 = stablehlo.while(%i = %c0, %it = %s) : tensor<i32>, tensor<6xf32>
  cond {
    %p = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %m = stablehlo.add %it, %one : tensor<6xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %m : tensor<i32>, tensor<6xf32>
  }
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%w#1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  %mx = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %n = stablehlo.negate %w#1 : tensor<6xf32>
  %r2 = stablehlo.reduce(%n init: %mx) applies stablehlo.maximum across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  %t = stablehlo.add %r, %r2 : tensor<f32>
  return %t : tensor<f32>
}'''

# 3 rows on 3 shards sliced to 2 (padded back to 3), strided by 3 on the
# unsharded dimension: that dimension keeps its limit and stride.
STRIDED = 'sdy.mesh @mesh = <["x"=3]>\n' + '''
func.func @main(%arg0: tensor<3x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %v0 = stablehlo.slice %arg0 [0:2, 8:15:3] : (tensor<3x16xf32>) -> tensor<2x3xf32>
  return %v0 : tensor<2x3xf32>
}'''

CASES = {"slice_sum": SLICE_SUM, "slice_max": SLICE_MAX, "while_sum": WHILE_SUM, "strided": STRIDED}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("halo", [True, False])
def test_partitioned_program_computes_the_global_result(name, halo):
    report = simulate_text(CASES[name], f"{name}.mlir", seed=5, halo_exchange=halo)
    assert report.ok, report.text()


def test_the_reduce_operand_is_masked_with_its_init_value():
    out = optimize_text(SLICE_MAX, "t.mlir", parse_flags(["--sdy-propagation-pipeline", "--sdy-pad-for-divisibility"]))
    assert "stablehlo.select" in out and "stablehlo.iota" in out
    # (the fill is the broadcast init, not a zero constant)
    assert "0xFF800000" in out and "dense<0.000000e+00>" not in out


def test_a_strided_slice_keeps_its_stride_where_it_did_not_grow():
    out = optimize_text(STRIDED, "t.mlir", parse_flags(["--sdy-propagation-pipeline", "--sdy-pad-for-divisibility"]))
    assert "[0:3, 8:15:3]" in out, out


def test_a_padded_slice_reading_past_its_operand_is_refused_where_it_is():
    # [1:7] padded to 8 would read a[1:9] of an 8-element operand
    text = SLICE_MAX.replace("[0:6, 0:3] : (tensor<8x3xf32>) -> tensor<6x3xf32>", "[1:7, 0:3] : (tensor<8x3xf32>) -> tensor<6x3xf32>")
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(["--sdy-propagation-pipeline", "--sdy-pad-for-divisibility"]))
    assert str(e.value).startswith("t.mlir:7:") and "cannot pad this slice" in str(e.value), str(e.value)
