"""Passes that hand the census their edits (Invalidated.relisted) or say
exactly what they changed: after every step the census agrees with a
fresh walk (test_census.checked_steps), and the steps did say so."""
from test_census import checked_steps  # noqa: F401  (the fixture)

from sdylog.passes.census import Invalidated

FLAGS = "-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true"

# A manual computation (its in-shardings applied to the arguments, data-flow
# edges on its body and results), an optimization barrier (edges on its
# results) and a result whose sharding differs from what reaches it (a
# reshard, which becomes collectives).
MODULE = '''sdy.mesh @m = <["p"=2, "q"=2]>
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"p"}]>}, tensor<8x8xf32>) {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"q"}, {}]>] out_shardings=[<@m, [{"q"}, {}]>]
      manual_axes={"q"} (%x: tensor<4x8xf32>) {
    %1 = stablehlo.negate %x : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.optimization_barrier %b : tensor<8x8xf32>
  %3 = stablehlo.add %0, %2 : tensor<8x8xf32>
  return %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>
}'''


def _results(checked_steps, name):
    return [r for r in checked_steps if isinstance(r, Invalidated) and r.touched and name in r.touched]


def test_sink_and_reshard_to_collectives_relist_the_census_as_a_walk_would(checked_steps):
    from sdylog.passes.driver import optimize_text, parse_flags
    out = optimize_text(MODULE, "f.mlir", parse_flags(FLAGS.split()))
    assert "sdy.all_to_all" in out or "sdy.all_slice" in out or "sdy.all_gather" in out
    sunk = _results(checked_steps, "sdy.data_flow_edge")
    assert sunk and sunk[-1].shardings_only and sunk[-1].relisted
    rewritten = _results(checked_steps, "sdy.reshard")
    assert any(r.relisted for r in rewritten)


def test_apply_sharding_constraints_keeps_the_census_when_it_sets_shardings_only(checked_steps):
    from sdylog.passes.driver import optimize_text, parse_flags
    out = optimize_text(MODULE, "f.mlir", parse_flags(["-sdy-import-pipeline", "-sdy-apply-sharding-constraints"]))
    assert '%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}, {}]>}' in out
    assert Invalidated(frozenset(), shardings_only=True) in checked_steps
