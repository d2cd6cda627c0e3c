"""User-priority rounds (rules/propagation/phases.dl, tensors.dl, core.dl):
dimension priorities p0, p1, ... take effect in rounds, p0 first, then each
distinct priority above 0 in increasing order; until its round a dimension
with a priority is closed and empty and its units are held back, and a
write refused for that is made when the round comes. Each round runs the
five op-priority steps (phases 5 * round .. 5 * round + 4). The expected
shardings are Shardy's -sdy-user-priority-propagate
(shared/conformance/shardy_ref_opt.py gives the same)."""
import pytest

from rules_probe import AGGRESSIVE, USER_PRIORITY, Derived

# Two operands of an add hold "a" and "b" in dimension 0 with priorities.
CONFLICT = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}PA, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}PB, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


def round_of(d: Derived, phase: int) -> int:
    (r,) = [r for p, r, _, _ in d.rows("phase") if p == phase]
    return r


@pytest.mark.parametrize("pa, pb, winner", [("p1", "p0", "b"), ("p0", "p1", "a")])
def test_the_earlier_round_wins_a_conflict(pa, pb, winner):
    d = Derived(CONFLICT.replace("PA", pa).replace("PB", pb), USER_PRIORITY)
    assert d.sharding("%0") == d.sharding("%1") == d.sharding("result0") == [[winner], []]
    assert {round_of(d, u.phase) for u in d.unit_ranks("%0")} == {0}


def test_without_user_priorities_the_same_conflict_is_a_tie():
    d = Derived(CONFLICT.replace("PA", "p1").replace("PB", "p0"), AGGRESSIVE)
    assert d.sharding("%0") == [[], []]


# Priorities 3 and 1 (no 0 but the default): rounds 1 for p1 and 2 for p3.
ROUNDS = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p3, {?}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b", ?}p1]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_rounds_go_by_increasing_priority():
    d = Derived(ROUNDS, USER_PRIORITY)
    assert sorted(d.rows("priority_round")) == [(0, 0), (1, 1), (3, 2)]
    assert sorted(d.rows("round_start")) == [(0, 0), (1, 5), (2, 10)]
    assert {(u.dim, u.unit, round_of(d, u.phase)) for u in d.unit_ranks("%0")} == {(0, "a", 2), (1, "b", 1)}
    # an open dimension with a priority starts in its round, closed and empty before
    assert {(u.dim, u.unit, u.phase, u.by) for u in d.unit_ranks("%arg0")} == \
        {(0, "a", 10, "init"), (1, "b", 5, "stablehlo.add")}
    closed = {ph for t, dim, ph in d.rows("dim_closed_at") if (t, dim) == (d.tensor("%arg0"), 0)}
    assert closed == set(range(10))
    assert d.sharding("%0") == d.sharding("%arg1") == [["a"], ["b"]]


# %arg1's open dimension 0 has priority 1: the add gives it "a" in round 0,
# which it refuses until its round.
REFUSED = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p0, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}p1, {?}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_a_write_refused_for_a_later_round_is_made_in_that_round():
    d = Derived(REFUSED, USER_PRIORITY)
    (result,) = d.unit_ranks("%0")
    (arg,) = d.unit_ranks("%arg1")
    assert (result.unit, round_of(d, result.phase)) == ("a", 0)
    assert (arg.unit, arg.phase, arg.by) == ("a", 5, "stablehlo.add")   # round 1's first phase
    assert {(f, to) for t, f, to in d.rows("restriction_lifts") if t == d.tensor("%arg1")} == \
        {(phase, 5) for phase in range(5)}


# %arg0's "a":(1)2 waits for round 1; in round 0 the add offers %arg0
# "a":(3)2, which clashes with it (units.dl: unit_clash): the tensor refuses
# it, as Shardy keeps the annotation's axes (core.dl: start_excludes).
CLASH_BEFORE_ITS_ROUND = """
sdy.mesh @mesh = <["a"=6]>
func.func @main(%arg0: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2}p1, {?}]>},
                %arg1: tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"a":(3)2}p0]>}) -> tensor<12x12xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<12x12xf32>
  return %0 : tensor<12x12xf32>
}
"""


def test_a_unit_clashing_with_one_held_for_a_later_round_stays_out():
    d = Derived(CLASH_BEFORE_ITS_ROUND, USER_PRIORITY)
    assert [(u.unit, u.by) for u in d.unit_ranks("%arg0")] == [("a:(1)2", "init")]
    assert d.sharding("%arg0") == [["a:(1)2"], []]
    assert d.sharding("%0") == d.sharding("result0") == [[], ["a:(3)2"]]
