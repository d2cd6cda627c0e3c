"""A convolution summed in blocks over one window dimension while its
kernel is also sharded on another window dimension that has no factor (a
window of one position there per kernel row: its axes are cleared, the
kernel gathered there first). The rules took that kernel dimension for a
sharded window dimension not summed over and did not sum the convolution
in blocks (conv_sum_blocked); it stayed sharded as Shardy leaves it and,
padded for divisibility (2 image rows on 4 shards, a 3-row kernel: 4
rows, dilated by 3), its per-device program did not verify ("inferred
shape '[0, 11, 4, 4]' is incompatible"). Found by c35c."""
from __future__ import annotations

import pytest

from sdylog.simulate.simulate import simulate_text


def weight_gradient(rows: int) -> str:
    out = (rows + 5 - 7) // 2 + 1
    return f"""sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<3x{rows}x8x4xf32>, %b: tensor<3x3x11x4xf32>) -> tensor<{out}x11x4x4xf32> {{
  %l = sdy.sharding_constraint %a <@mesh, [{{}}, {{"x"}}, {{"y"}}, {{}}]> : tensor<3x{rows}x8x4xf32>
  %g = sdy.sharding_constraint %b <@mesh, [{{}}, {{"x"}}, {{"y"}}, {{}}]> : tensor<3x3x11x4xf32>
  %r = stablehlo.convolution(%l, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {{stride = [2, 1], pad = [[2, 3], [3, 3]], lhs_dilate = [1, 2], rhs_dilate = [3, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<3x{rows}x8x4xf32>, tensor<3x3x11x4xf32>) -> tensor<{out}x11x4x4xf32>
  return %r : tensor<{out}x11x4x4xf32>
}}
"""


@pytest.mark.parametrize("rows", [2, 3, 4, 6])
def test_kernel_sharded_on_a_cleared_window_dimension(rows):
    report = simulate_text(weight_gradient(rows), f"w{rows}.mlir", seed=5)
    assert report.ok, report.text()
    assert report.outputs
