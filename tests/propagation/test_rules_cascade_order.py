"""Cascade order within a visit (rules/propagation/core.dl, `write`; visits.dl,
`visit_tensor`): the op the sweep visits writes its operands, then its
results, and the last written tensor's cascade runs first (Shardy's LIFO
worklist): tensor j of n gets cascade order n - j.

In both modules below the add's result is annotated [{a}, {b}]; the add
gives it to %x = negate(%w) and %y = transpose(%w), whose visits (earlier in
the sweep) then carry it back to %w in two cascades that disagree: through
the negate %w would be [{a}, {b}], through the transpose [{b}, {a}]. The
cascade of the add's later operand comes first and wins. The expected
shardings are Shardy's (shared/conformance/shardy_ref_opt.py gives the same).
"""
import pytest

from rules_probe import AGGRESSIVE, BASIC, Derived

MODULE = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %x = stablehlo.negate %w : tensor<8x8xf32>
  %y = stablehlo.transpose %w, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = stablehlo.add OPERANDS {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}
"""
# (printed names: %w is %arg0, %x is %0, %y is %1, %z is %2)


@pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])
@pytest.mark.parametrize("operands, winner, w", [
    ("%x, %y", "stablehlo.transpose", [["b"], ["a"]]),
    ("%y, %x", "stablehlo.negate", [["a"], ["b"]]),
], ids=["transpose-last", "negate-last"])
def test_the_cascade_of_the_last_operand_wins(options, operands, winner, w):
    d = Derived(MODULE.replace("OPERANDS", operands), options)
    assert d.sharding("%arg0") == w
    assert {u.by for u in d.unit_ranks("%arg0")} == {winner}


def test_cascade_orders_are_n_minus_j():
    d = Derived(MODULE.replace("OPERANDS", "%x, %y"))
    add = d.op("stablehlo.add")
    assert sorted((j, k) for o, j, _, _, _, k in d.rows("visit_tensor") if o == add) == [(0, 3), (1, 2), (2, 1)]
    # the visits the add's writes trigger see %y's units at cascade order 2, %x's at 3
    position = d.position(add)
    assert {(u.position, u.seen // d.cascade_step) for u in d.unit_ranks("%0")} == {(position, 3)}
    assert {(u.position, u.seen // d.cascade_step) for u in d.unit_ranks("%1")} == {(position, 2)}
    # %w's units came in %y's cascade, within the add's position
    assert {(u.position, u.cascade // d.cascade_step) for u in d.unit_ranks("%arg0")} == {(position, 2)}
