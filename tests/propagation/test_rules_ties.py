"""Exact ties (rules/propagation/core.dl, the subsumptive rules with `r2 <=
r1`): where different units reach one slot at the same rank, the op sees
both and nothing propagates; where one comes first it keeps the slot.
Slots: a factor position of a visit (op_unit: no proposal survives a tie),
a unit another factor of a basic visit uses (test_rules_unit_clashes.py),
and a tensor dimension position (unit_at: a unit offered at the rank the
slot got its own stays out). The expected shardings are Shardy's
(shared/conformance/shardy_ref_opt.py gives the same)."""
import pytest

from rules_probe import AGGRESSIVE, BASIC, USER_PRIORITY, Derived

STRATEGIES = pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])

# The add's operands hold "a" and "b" in their one dimension: both reach the
# add's factor 0, position 0, at the add's visit.
TIED = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


@STRATEGIES
def test_tied_units_at_a_visit_both_drop(options):
    d = Derived(TIED, options)
    add = d.op("stablehlo.add")
    present = {(f, p, d.unit_name(u), (ph, pos, c)) for o, f, p, u, _, _, ph, pos, c, _, _ in d.rows("op_unit")
               if o == add}
    (rank,) = {r for *_, r in present}
    assert {(f, p, u) for f, p, u, _ in present} == {(0, 0, "a"), (0, 0, "b")}   # at one rank
    assert d.proposals("stablehlo.add", "op_unit") == set()   # neither is proposed
    assert d.proposals("stablehlo.add") == set()              # so the compatible axes are empty
    assert d.cuts("stablehlo.add") == {(0, 0, rank)}          # from position 0, at that rank
    assert d.sharding("%0") == [[]]
    assert d.sharding("result0") == [[]]
    assert rank[0] == 0   # (phase, position, cascade)


# %arg2 meets "a" at the first add and "b" at the second, later in the sweep.
FIRST_COMES_FIRST = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>},
                %arg2: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.add %arg0, %arg2 : tensor<8xf32>
  %1 = stablehlo.add %arg1, %arg2 : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
"""


@STRATEGIES
def test_the_first_unit_to_reach_a_tensor_keeps_it(options):
    d = Derived(FIRST_COMES_FIRST, options)
    first, second = d.ops("stablehlo.add")
    (got,) = d.unit_ranks("%arg2")
    assert (got.unit, got.by, got.position) == ("a", "stablehlo.add", d.position(first))
    assert d.sharding("%0") == [["a"]]
    # the second add sees "a" (held by %arg2) and "b" at its visit: a tie, %1 gets neither
    assert d.sharding("%1") == [[]]



# main's result slot holds "a" from round 1 (its priority); the returned
# value got "c" in round 0, which the result link would offer the slot when
# its round opens, at the turn the slot takes "a" (one cascade after it: an
# offer comes after the visit has read its turn, core.dl: LIFT_ORDER). By
# then the link sees "a" and "c" at position 0: the conflict cuts the offer.
SLOT_AT_ITS_ROUND = """
sdy.mesh @mesh = <["a"=2, "c"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}p0]>})
    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1]>}) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def test_a_unit_offered_when_a_slot_takes_its_own_is_cut():
    d = Derived(SLOT_AT_ITS_ROUND, USER_PRIORITY)
    slot = d.tensor("result0")
    ((held, rank),) = [(u.unit, (u.phase, u.position, u.cascade)) for u in d.unit_ranks("result0")]
    offers = [(p, d.unit_name(u) if p >= 0 else None, (ph, pos, c))
              for _, _, _, p, u, _, _, _, ph, pos, c, _ in d.rows("lift_offer")]
    assert (held, rank[0]) == ("a", 5)   # from round 1's first phase
    assert offers == [(-2, None, rank)]  # only the cut, from position 0 (CUT_AT(0) = -2), at that rank
    assert [u for _, _, t, _, _, u, *_ in d.rows("write") if t == slot] == []
    assert d.sharding("result0") == [["a"]]
    assert d.sharding("%0") == [["c"]]
