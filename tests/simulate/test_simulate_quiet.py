"""`sdylog simulate` computes with infinities and NaNs as the programs do
(log(0), max reductions from -inf): comparing the runs prints no numpy
warning (r31 sec. 8)."""
from __future__ import annotations

import warnings

import numpy as np

from sdylog.simulate.mpmd import close_to_bf16, compare_bitwise
from sdylog.simulate.simulate import simulate_text

# -inf in every result element on some devices, NaN on others (log of
# negative inputs): the comparison subtracts -inf from -inf.
LOG = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<8x4xf32>
  %0 = stablehlo.log %z : tensor<8x4xf32>
  %1 = stablehlo.log %a : tensor<8x4xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}"""


def test_comparing_infinities_and_nans_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = simulate_text(LOG, "t.mlir", seed=1)
    assert report.ok, report.text()


def test_the_mpmd_comparisons_warn_nothing():
    inf = np.array([-np.inf, np.inf, np.nan, 1.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compare_bitwise(inf, inf) == (True, 0.0)
        assert compare_bitwise(inf, inf[::-1].copy())[0] is False
        assert close_to_bf16(inf, inf)
