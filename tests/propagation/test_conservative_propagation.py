"""Conservative propagation (-sdy-{basic,aggressive}-propagate
conservative-propagation=true): no compatible axes from the first sub-axis
on. Expectations checked against Shardy (jaxlib's sdy passes)."""
from __future__ import annotations

import pytest

from sdylog.passes.driver import optimize_text, parse_flags

MODULE = """
sdy.mesh @m = <["a"=4, "b"=2, "c"=8]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a", "b"}]>},
                %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{"b", "c"}]>},
                %arg2: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>},
                %arg3: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a":(1)2}]>})
    -> (tensor<2x4xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<16xf32>) {
  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.reshape %arg1 : (tensor<16xf32>) -> tensor<4x4xf32>
  %3 = stablehlo.reshape %arg2 : (tensor<2x4xf32>) -> tensor<8xf32>
  %4 = stablehlo.negate %arg3 : tensor<16xf32>
  return %0, %1, %2, %3, %4 : tensor<2x4xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<16xf32>
}
"""

# What each op's result gets (None: no sharding at all).
CONSERVATIVE = {
    # "a" (4) would split over the size-2 dimension: a sub-axis, so nothing.
    "%0 = stablehlo.reshape": None,
    # whole axes fit both dimensions.
    "%1 = stablehlo.reshape": '[{"a", ?}, {"b", ?}]',
    # "b", then "c" would split ("c":(1)2): the axes stop after "b".
    "%2 = stablehlo.reshape": '[{"b", ?}, {?}]',
    # the operand's "a" (padded) would be "a":(1)2 in the result's major factor.
    "%3 = stablehlo.reshape": None,
    # a sub-axis given by the user does not propagate either.
    "%4 = stablehlo.negate": None,
}
AGGRESSIVE = {
    "%0 = stablehlo.reshape": '[{"a":(1)2, ?}, {"a":(2)2, "b", ?}]',
    "%1 = stablehlo.reshape": '[{"a", ?}, {"b", ?}]',
    "%2 = stablehlo.reshape": '[{"b", "c":(1)2, ?}, {"c":(2)4, ?}]',
    "%3 = stablehlo.reshape": '[{"a":(1)2, ?}]',
    "%4 = stablehlo.negate": '[{"a":(1)2, ?}]',
}


def result_shardings(flag: str) -> dict[str, str | None]:
    text = optimize_text(MODULE, "conservative.mlir", parse_flags([flag]))
    found = {}
    for line in text.splitlines():
        for op in CONSERVATIVE:
            if op + " " in line:
                found[op] = line.split("sharding_per_value<[<@m, ")[1].split("]>]>")[0] + "]" \
                    if "sdy.sharding" in line else None
    return found


@pytest.mark.parametrize("flag", ["-sdy-basic-propagate=conservative-propagation=true",
                                  "-sdy-aggressive-propagate=conservative-propagation=true"])
def test_conservative_propagation_keeps_only_whole_axes(flag):
    assert result_shardings(flag) == CONSERVATIVE


def test_without_conservative_sub_axes_propagate():
    assert result_shardings("-sdy-aggressive-propagate") == AGGRESSIVE
