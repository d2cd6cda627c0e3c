"""Sharding groups whose members start with different shardings: every
propagation pass puts an open sharding constraint after each member, which
takes its place in the group (Shardy's syncGroupMemberShardings).
Expectations checked against Shardy (jaxlib's sdy passes)."""
from __future__ import annotations

import pytest

from sdylog.passes.driver import optimize_text, parse_flags

MODULE = """
sdy.mesh @m = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<16x8xf32>, %arg1: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %0 = stablehlo.abs %arg0 : tensor<16x8xf32>
  %1 = sdy.sharding_constraint %0 <@m, [{"y", ?}, {?}]> : tensor<16x8xf32>
  %2 = stablehlo.negate %arg1 : tensor<16x8xf32>
  %3 = sdy.sharding_constraint %2 <@m, [{?}, {"x"}]> : tensor<16x8xf32>
  sdy.sharding_group %1 group_id = 0 : tensor<16x8xf32>
  sdy.sharding_group %3 group_id = 0 : tensor<16x8xf32>
  %4 = stablehlo.add %1, %3 : tensor<16x8xf32>
  return %4, %1 : tensor<16x8xf32>, tensor<16x8xf32>
}
"""


def body(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(("%", "sdy.sharding_group", "return"))]


@pytest.mark.parametrize("flag", ["-sdy-basic-propagate", "-sdy-aggressive-propagate"])
def test_conflicting_members_get_open_constraints(flag, capsys):
    out = body(optimize_text(MODULE, "groups.mlir", parse_flags([flag])))
    both = '<@m, [{"y", ?}, {"x", ?}]>'
    assert out[1] == f'%1 = sdy.sharding_constraint %0 {both} : tensor<16x8xf32>'
    assert out[2] == f'%2 = sdy.sharding_constraint %1 {both} : tensor<16x8xf32>'
    # the member keeps its own closed "x"; the new constraint after it is the group's
    assert out[4] == '%4 = sdy.sharding_constraint %3 <@m, [{"y", ?}, {"x"}]> : tensor<16x8xf32>'
    assert out[5] == f'%5 = sdy.sharding_constraint %4 {both} : tensor<16x8xf32>'
    assert out[6:9] == ["sdy.sharding_group %2 group_id=0 : tensor<16x8xf32>",
                        "sdy.sharding_group %5 group_id=0 : tensor<16x8xf32>",
                        f"%6 = stablehlo.add %2, %5 {{sdy.sharding = #sdy.sharding_per_value<[{both}]>}}"
                        " : tensor<16x8xf32>"]
    assert out[9] == "return %6, %2 : tensor<16x8xf32>, tensor<16x8xf32>"
    err = capsys.readouterr().err
    # at the first member's op (%1, line 5 of MODULE)
    assert err.startswith("groups.mlir:5:8: warning: The initial operand shardings on the sharding groups of "
                          "groupID: 0 do not match.")


def test_members_that_agree_get_no_constraint(capsys):
    agree = MODULE.replace('<@m, [{?}, {"x"}]>', '<@m, [{"y", ?}, {?}]>')
    out = body(optimize_text(agree, "groups.mlir", parse_flags(["-sdy-basic-propagate"])))
    assert sum("sdy.sharding_constraint" in line for line in out) == 2
    assert "warning" not in capsys.readouterr().err


EMPTY_GROUP = """
sdy.mesh @m = <["z"=4]>
func.func @main(%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{?}p0]>}, %arg1: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %arg1 : tensor<2xf32>
  sdy.sharding_group %0 group_id=0 : tensor<2xf32>
  sdy.sharding_group %arg0 group_id=0 : tensor<2xf32>
  return %arg1 : tensor<2xf32>
}
"""


def test_user_priorities_leave_no_priority_on_a_member_of_an_empty_group():
    # No member says anything, so the group's tensor ends with no sharding and
    # %arg0 keeps its own: the user-priority pass still drops its priority
    # (Shardy gives [{?}]); closed by the propagation pipeline's export, a
    # kept p0 made an invalid [{}p0] ("empty and closed but has a priority").
    out = optimize_text(EMPTY_GROUP, "groups.mlir", parse_flags(["-sdy-user-priority-propagate"]))
    assert "%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{?}]>}" in out
    assert "%0 = stablehlo.negate %arg1 : tensor<2xf32>" in out   # (no sharding: as Shardy)
    out = optimize_text(EMPTY_GROUP, "groups.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    assert "%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}" in out
    # the other propagation passes keep priorities, as Shardy's do
    out = optimize_text(EMPTY_GROUP, "groups.mlir", parse_flags(["-sdy-aggressive-propagate"]))
    assert "[{?}p0]" in out
