"""-sdy-insert-explicit-reshards on small modules of our own: explicit
expectations, and the output compared with Shardy's (jaxlib) for the same
input."""
from __future__ import annotations

import pytest

from passes_oracle import ours, same_text, shardy

FULL = {"enable-full-version": True}
MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2, "z"=4]>\n'


def unary(op: str, arg: str, res: str) -> str:
    return MESH + f"""
func.func @main(%arg0: tensor<8x32xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{arg}]>}}) -> tensor<8x32xf32> {{
  %0 = stablehlo.{op} %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{res}]>]>}} : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}}
"""


def binary(op: str, lhs: str, rhs: str | None, res: str) -> str:
    rhs_attr = f" {{sdy.sharding = #sdy.sharding<@mesh, [{rhs}]>}}" if rhs else ""
    return MESH + f"""
func.func @main(%arg0: tensor<8x32xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{lhs}]>}},
                %arg1: tensor<8x32xf32>{rhs_attr}) -> tensor<8x32xf32> {{
  %0 = stablehlo.{op} %arg0, %arg1 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{res}]>]>}} : tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}}
"""


def dot(lhs: str, rhs: str, res: str) -> str:
    return MESH + f"""
func.func @main(%arg0: tensor<8x32xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{lhs}]>}},
                %arg1: tensor<32x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{rhs}]>}}) -> tensor<8x16xf32> {{
  %0 = stablehlo.dot %arg0, %arg1 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{res}]>]>}} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}}
"""


CASES = {
    # two tensors: the larger sharding wins, the other side is resharded
    "negate_operand_resharded": unary("negate", '{"y"}, {}', '{"x"}, {}'),
    "negate_result_resharded": unary("negate", '{"x"}, {}', '{"y"}, {}'),
    # three tensors: the greedy choice (a missing sharding is closed and replicated)
    "add_greedy": binary("add", '{"x"}, {}', '{"x"}, {}', '{}, {"y"}'),
    "add_missing_sharding": binary("add", '{"x"}, {}', None, '{"x"}, {}'),
    # a sharded contracting dimension: an all-reduce after the dot
    "dot_all_reduce": dot('{"x"}, {"y"}', '{"y"}, {}', '{"x"}, {}'),
    # ... and the result resharded as well: op, all-reduce, reshard
    "dot_all_reduce_then_reshard": dot('{"x"}, {"y"}', '{"y"}, {}', '{"x"}, {"y"}'),
    # the greedy choice by tensor sizes (partitioning.md 2.3, worked check)
    "dot_greedy_by_size": dot('{"x"}, {"y"}', '{"y"}, {}', '{}, {"x"}'),
    # a reduction over two sharded dimensions, sub-axes merged in mesh order
    "reduce_sub_axes": MESH + """
func.func @main(%arg0: tensor<4x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2}, {"y"}, {"x":(1)2}]>}) -> tensor<16xf32> {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
""",
    # dimensions of several factors (reshape), no overflow
    "reshape_merge": MESH + """
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<32xf32> {
  %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8x4xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
""",
    # both operands of the multiply all-reduced (in operand order: the rows come
    # in an order that depends on string hashes), then both resharded
    "unreduced_operands_all_reduced_in_order": """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<2x64x13xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}) -> (tensor<2x13xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : (tensor<2x64x13xf32>, tensor<f32>) -> tensor<2x13xf32>
  %2 = stablehlo.add %1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : tensor<2x13xf32>
  %3 = stablehlo.multiply %2, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<2x13xf32>
  return %3 : tensor<2x13xf32>
}
""",
    # ops with no sharding rule are left as they are (partitioning.md 2.1 f): sdy
    # collectives already in the input, a custom call the registry does not know
    "ops_without_rule_skipped": """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> (tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}]>]>} : tensor<8xi32>
  %1 = sdy.all_gather [{"b"}] %0 out_sharding=<@mesh, [{}]> : tensor<8xi32>
  %2 = sdy.all_slice [{"a"}] %1 out_sharding=<@mesh, [{"a"}]> : tensor<8xi32>
  %3 = stablehlo.custom_call @unknown_thing(%2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}]>]>} : (tensor<8xi32>) -> tensor<8xi32>
  %4 = stablehlo.negate %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} : tensor<8xi32>
  return %4 : tensor<8xi32>
}
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_full_version_matches_shardy(name):
    text = CASES[name]
    flag = "sdy-insert-explicit-reshards{enable-full-version=true}"
    assert same_text(ours(text, "sdy-insert-explicit-reshards", options=FULL), shardy(text, flag)), name


def test_reshards_sit_where_shardy_puts_them():
    out = ours(CASES["dot_all_reduce_then_reshard"], "sdy-insert-explicit-reshards", options=FULL)
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("%")]
    dot, all_reduce, reshard = lines[0], lines[1], lines[2]
    assert "stablehlo.dot" in dot and '<@mesh, [{"x"}, {}]>' in dot
    assert all_reduce.startswith('%1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]>')
    assert reshard.startswith('%2 = sdy.reshard %1 <@mesh, [{"x"}, {"y"}]>')


def test_an_op_the_registry_does_not_know_is_an_error():
    from sdylog.ir.diagnostics import SdylogError
    text = MESH + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "mydialect.frobnicate"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    with pytest.raises(SdylogError, match=r"-:4:8: error: op 'mydialect.frobnicate' is unknown"):
        ours(text, "sdy-insert-explicit-reshards", options=FULL)


def test_an_all_reduce_of_an_unreduced_operand_gets_no_second_one():
    """An `sdy.all_reduce` may take an operand unreduced on its own axes:
    the pass puts no all-reduce before it (Shardy's does, and so sums twice
    when the pass runs again on its output, as `--partition` does)."""
    text = MESH + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) -> tensor<8xf32> {
  %0 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    out = ours(text, "sdy-insert-explicit-reshards", options=FULL)
    assert out.count("sdy.all_reduce") == 1, out
