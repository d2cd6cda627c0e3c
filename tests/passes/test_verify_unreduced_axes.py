"""-sdy-verify-unreduced-axes: the first violation of each function is an
error at its op, with Shardy's message; blessed ops and the transitions the
pass allows are no error, and the module is not changed."""
from __future__ import annotations

import pytest

from passes_oracle import ours
from quick_look_cases import assert_look_agrees, lit_modules
from sdylog.ir import parse_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import PassContext, verify_unreduced_axes

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
UNREDUCED_ARG = '%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>}'
SHARDED = '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}'


def test_an_op_dropping_unreduced_axes_is_an_error_at_it():
    text = MESH + f"""func.func @main({UNREDUCED_ARG}) -> tensor<8x8xf32> {{
  %0 = stablehlo.add %arg0, %arg0 {SHARDED} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}"""
    with pytest.raises(SdylogError) as e:
        ours(text, "sdy-verify-unreduced-axes")
    assert str(e.value) == ("-:3:8: error: 'stablehlo.add' op dropped unreduced axis 'y' without a blessed "
                            "operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced.")


def test_a_blessed_op_may_reduce_and_a_dot_may_introduce():
    text = MESH + f"""func.func @main({UNREDUCED_ARG}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {{
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{{"x"}}, {{}}]> : tensor<8x8xf32>
  %1 = stablehlo.add %0, %0 {SHARDED} : tensor<8x8xf32>
  %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}>]>}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.all_reduce {{"y"}} %2 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}}"""
    assert ours(text, "sdy-verify-unreduced-axes") == ours(text)


def test_each_function_reports_its_first_violation():
    text = MESH + f"""func.func private @callee(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}})
    -> (tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}>}}) {{
  return %arg0 : tensor<8x8xf32>
}}
func.func @main({UNREDUCED_ARG}) -> tensor<8x8xf32> {{
  %0 = func.call @callee(%arg0) {SHARDED} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}"""
    with pytest.raises(SdylogError) as e:
        ours(text, "sdy-verify-unreduced-axes")
    lines = str(e.value).splitlines()
    assert lines == [
        "-:4:3: error: 'func.return' op has unreduced axes mismatch for 'y' at return value 0 without a blessed "
        "operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced.",
        "-:7:8: error: 'func.call' op has unreduced axes mismatch for 'y' at call argument 0."]


@pytest.mark.parametrize("text", lit_modules("verify_unreduced_axes.mlir", "insert_explicit_reshards",
                                             "reshard_to_collectives.mlir"))
def test_the_look_for_unreduced_axes_agrees_with_the_rules(text, monkeypatch):
    assert_look_agrees(text, "--sdy-verify-unreduced-axes", verify_unreduced_axes, "_may_violate", monkeypatch)


def test_the_look_finds_unreduced_axes_wherever_a_sharding_is(mlir_ctx):
    def look(text):
        return verify_unreduced_axes._may_violate(parse_module(MESH + text), PassContext())
    plain = 'func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n  return %arg0 : tensor<8x8xf32>\n}'
    assert not look(plain)
    assert look(plain.replace("tensor<8x8xf32>)", "tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                              '[{}, {}], unreduced={"y"}>})', 1))
    assert look(plain.replace("-> tensor<8x8xf32>", '-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, '
                              '[{}, {}], unreduced={"y"}>})'))
    assert look(plain.replace("return %arg0", '%0 = sdy.reshard %arg0 <@mesh, [{}, {}], unreduced={"x"}> : '
                              'tensor<8x8xf32>\n  return %0'))
    assert look(plain.replace("return %arg0", '%0 = stablehlo.negate %arg0 {sdy.sharding = '
                              '#sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x"}>]>} : '
                              'tensor<8x8xf32>\n  return %0'))
    assert look(plain.replace("return %arg0", '%0 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}, {}]> : '
                              'tensor<8x8xf32>\n  return %0'))
