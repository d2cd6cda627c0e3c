"""-sdy-per-instruction-partitioning: which ops the filter chooses, the
manual computation each becomes, and that the program still computes the
same thing (simulated on its mesh)."""
from __future__ import annotations

import pytest

from passes_oracle import ours
from sdylog.ir import parse_module
from sdylog.passes import parse_options
from sdylog.passes.per_instruction_partitioning import Filter, candidates
from sdylog.simulate.simulate import simulate_text

PROGRAM = '''sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%lhs: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %rhs: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                %r: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x16xf32>) {
  %dot = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %add = stablehlo.add %dot, %dot {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
  %neg = stablehlo.negate %r : tensor<8x16xf32>
  %g = sdy.all_gather [{"x"}, {}] %add out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  %t = stablehlo.tanh %g {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x16xf32>
  return %t, %neg : tensor<8x16xf32>, tensor<8x16xf32>
}'''


@pytest.mark.parametrize("text, want", [
    ("", Filter(select_all=True)),
    ("'dot, pad'", Filter(op_names=("dot", "pad"))),
    ("dot,constant,reshard", Filter(op_names=("dot", "constant", "reshard"))),
    ("'selectLow=0, selectHigh=3'", Filter(0, 3)),
    ("selectHigh=2,tanh", Filter(-1, 2, ("tanh",))),
    ("selectLow=x", Filter()),          # (a bound that is no number is ignored, as Shardy does)
])
def test_filter(text, want):
    assert Filter.parse(text) == want


def _names(flt: str) -> list[str]:
    module = parse_module(PROGRAM)
    return [op.name for op in candidates(module, Filter.parse(flt))]


def test_candidates_are_ops_with_sharded_values_in_program_order():
    # the negate has no sharded value; collectives are never taken
    assert _names("") == ["stablehlo.dot", "stablehlo.add", "stablehlo.tanh"]
    assert _names("selectLow=1") == ["stablehlo.add", "stablehlo.tanh"]
    assert _names("selectHigh=0") == ["stablehlo.dot"]
    assert _names("selectLow=1, selectHigh=1, tanh") == []
    assert _names("tanh, add") == ["stablehlo.add", "stablehlo.tanh"]


def test_each_chosen_op_becomes_a_manual_computation_of_per_device_code():
    out = ours(PROGRAM, "sdy-per-instruction-partitioning",
               options=parse_options("sdy-per-instruction-partitioning", "filter=dot,tanh"))
    assert out.count("sdy.manual_computation") == 2
    assert 'manual_axes={"x", "y"} (%arg3: tensor<4x32xf32>, %arg4: tensor<32x8xf32>)' in out
    assert "stablehlo.dot %arg3, %arg4 : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>" in out
    assert 'manual_axes={"y"} (%arg3: tensor<8x8xf32>)' in out
    assert "stablehlo.add" in out and "stablehlo.negate %arg2" in out


INDIVISIBLE = '''sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<6x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> (tensor<5x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %s = stablehlo.slice %a [0:5, 0:32] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<6x32xf32>) -> tensor<5x32xf32>
  %d = stablehlo.dot %s, %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<5x32xf32>, tensor<32x16xf32>) -> tensor<5x16xf32>
  %r = sdy.reshard %d <@mesh, [{}, {}]> : tensor<5x16xf32>
  return %r : tensor<5x16xf32>
}'''


def test_padded_operands_and_sliced_results_where_a_dimension_is_not_divisible():
    out = ours(INDIVISIBLE, "sdy-per-instruction-partitioning",
               options=parse_options("sdy-per-instruction-partitioning", "filter=dot,reshard"))
    assert out.count("stablehlo.pad") == 2 and out.count("sdy.manual_computation") == 2
    assert '"stablehlo.all_gather"' in out
    assert out.count("[0:5, 0:16]") == 2   # each result cut back to 5 rows


@pytest.mark.parametrize("program, flt", [(PROGRAM, ""), (PROGRAM, "selectLow=1"), (PROGRAM, "tanh")])
def test_the_program_computes_the_same(program, flt):
    out = ours(program, "sdy-per-instruction-partitioning",
               options=parse_options("sdy-per-instruction-partitioning", f"filter='{flt}'"))
    report = simulate_text(out, "per_instruction.mlir", seed=2, explicit=True)
    assert report.ok, out + report.text()
    assert report.outputs
