"""The collectives that regather an argmax's (value, index) pairs are
costed as what the devices run (issue 18).

No collective body combines an argmax's pairs, so convert-global-to-local
all-gathers the per-device results of the reduce over the collective's
axes and reduces them again locally (rules/partition/reduction_kind.dl,
collective_regathers). Before, the cost model counted each such
`sdy.all_reduce` as a ring all-reduce, 2 (g - 1) / g S bytes per device,
which equals the all-gather's (g - 1) S only for g = 2 and undercounts
above (in `sdylog run --partition`'s report and `simulate --json`)."""
from __future__ import annotations

import re

import pytest

from sdylog.simulate.simulate import simulate_text
from tests.simulate.test_reduction_kinds import ARGMAX


def argmax_on(devices: int) -> str:
    return re.sub(r'<\["x"=2\]>', f'<["x"={devices}]>', ARGMAX, count=1)


@pytest.mark.parametrize("g", [2, 4, 8])
def test_argmax_regather_is_an_all_gather_of_both_results(g):
    report = simulate_text(argmax_on(g), "argmax.mlir", seed=1)
    assert report.ok, report.text()
    # f32[4] and i32[4], replicated after the reduce: S = 16 bytes each
    assert [(c["kind"], c["axes"], c["bytes_per_device"]) for c in report.collectives] == \
        [("all_gather", '{"x"}', (g - 1) * 16)] * 2
    assert report.json()["bytes_per_device"] == 2 * (g - 1) * 16
    # ... as the devices ran them: two all-gathers, no all-reduce
    assert report.stats.counts == {"all_gather": 2}, report.stats.counts


def test_a_sum_is_still_an_all_reduce():
    text = argmax_on(4).split("func.func")[0] + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    report = simulate_text(text, "sum.mlir", seed=1)
    assert report.ok, report.text()
    assert [(c["kind"], c["bytes_per_device"]) for c in report.collectives] == [("all_reduce", 2 * 3 * 16 // 4)]
