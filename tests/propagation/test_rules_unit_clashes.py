"""Unit clashes of sub-axes (rules/propagation/units.dl, `unit_clash`; core.dl):
a sub-axis that is not a run of its axis's chain of units is a unit of its
own, which clashes with the units it overlaps or cannot coexist with
(Shardy's canCoexist); a tensor never holds two clashing units (the first
wins), and the basic strategy proposes no unit that clashes with one a
tensor of the op holds. On an axis of size 6 whose chain is "a":(1)2,
"a":(2)3, the sub-axis "a":(3)2 is such a unit. The expected shardings are
Shardy's (shared/conformance/shardy_ref_opt.py gives the same)."""
import pytest

from rules_probe import AGGRESSIVE, BASIC, Derived

ADD = """
sdy.mesh @mesh = <["a"=6]>
func.func @main(%arg0: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {}]>},
                %arg1: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a":(3)2}]>}) -> tensor<12x12xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<12x12xf32>
  return %0 : tensor<12x12xf32>
}
"""


def clashes(d: Derived) -> set[tuple[str, str]]:
    return {(d.unit_name(u1), d.unit_name(u2)) for u1, u2 in d.rows("unit_clash")}


def test_a_sub_axis_off_the_chain_is_a_unit_that_clashes():
    d = Derived(ADD)
    index = dict(d.rows("chain_unit"))
    units = {(d.unit_name(u), index.get(u)) for u, *_ in d.rows("axis_unit")}
    assert units == {("a:(1)2", 0), ("a:(2)3", 1), ("a:(3)2", None)}   # (3)2: a unit of its own
    # (3)2 overlaps (2)3; beside (1)2 it leaves a gap of 3/2
    assert clashes(d) == {("a:(3)2", "a:(1)2"), ("a:(1)2", "a:(3)2"),
                          ("a:(3)2", "a:(2)3"), ("a:(2)3", "a:(3)2")}


def test_sub_axes_of_one_chain_do_not_clash():
    d = Derived(ADD.replace('"a"=6', '"a"=8').replace('"a":(3)2', '"a":(4)2'))
    assert clashes(d) == set()
    assert d.sharding("%0") == [["a:(1)2"], ["a:(4)2"]]


def test_of_two_clashing_units_one_visit_writes_the_first_factors():
    """Aggressive: both factors' compatible axes hold a unit; the result
    takes factor 0's, and the clashing one of factor 1 is dropped there."""
    d = Derived(ADD, AGGRESSIVE)
    assert d.proposals("stablehlo.add") == {(0, 0, "a:(1)2"), (1, 0, "a:(3)2")}
    assert [(u.dim, u.unit) for u in d.unit_ranks("%0")] == [(0, "a:(1)2")]
    assert d.sharding("%0") == [["a:(1)2"], []]


def test_basic_proposes_no_unit_that_clashes_with_one_the_op_holds():
    d = Derived(ADD, BASIC)
    add = d.op("stablehlo.add")
    # (op_unit rows of widen 2: units that block a factor of the op)
    blocked = {(f, d.unit_name(u)) for o, f, _, u, _, _, _, _, _, w, _ in d.rows("op_unit") if o == add and w == "blocking"}
    assert {(0, "a:(3)2"), (1, "a:(1)2")} <= blocked
    assert d.proposals("stablehlo.add") == set()
    assert d.sharding("%0") == [[], []]


# The negate gives %0 "a":(3)2 first; the add then offers it "a":(1)2.
HELD_FIRST = """
sdy.mesh @mesh = <["a"=6]>
func.func @main(%arg0: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}, {}]>},
                %arg1: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a":(3)2}]>}) -> tensor<12x12xf32> {
  %0 = stablehlo.negate %arg1 : tensor<12x12xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<12x12xf32>
  return %1 : tensor<12x12xf32>
}
"""


@pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])
def test_a_tensor_holding_a_unit_never_takes_one_that_clashes(options):
    d = Derived(HELD_FIRST, options)
    assert d.sharding("%0") == [[], ["a:(3)2"]]
    assert {u.unit for u in d.unit_ranks("%0")} == {"a:(3)2"}
    assert d.sharding("%1") == ([[], []] if options is BASIC else [["a:(1)2"], []])
