"""-sdy-pad-for-divisibility: dimensions their sharding does not divide are
padded to the next multiple of their number of shards; the per-device program
made from the padded one computes what the global program does."""
from __future__ import annotations

import pytest

from quick_look_cases import assert_look_agrees, lit_modules
from sdylog.ir import parse_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import PassContext, pad_for_divisibility
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

M42 = 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'


def pad(text):
    return optimize_text(text, "t.mlir", parse_flags(["--sdy-pad-for-divisibility"]))


def pad_after_collectives(text):
    """text propagated, resharded (full version), its permutation factors
    resolved, its reshards made collectives, then padded."""
    return optimize_text(text, "t.mlir", parse_flags([
        "--sdy-propagation-pipeline", "--sdy-insert-explicit-reshards=enable-full-version=true",
        "--sdy-resolve-permutation-factors", "--sdy-reshard-to-collectives", "--sdy-pad-for-divisibility"]))


def pv(dims):
    return "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, " + dims + ">]>}"


# 7 rows over 4 devices: padded to 8, sliced, computed on, gathered and cut back.
SLICE_TANH_GATHER = M42 + f'''
func.func @main(%a: tensor<7x8xf32>) -> tensor<7x8xf32> {{
  %0 = sdy.all_slice [{{"x"}}, {{}}] %a out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<7x8xf32>
  %1 = stablehlo.tanh %0 {pv('[{"x"}, {}]')} : tensor<7x8xf32>
  %2 = sdy.all_gather [{{"x"}}, {{}}] %1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<7x8xf32>
  return %2 : tensor<7x8xf32>
}}'''

# A contraction over 7 split in two: exp makes the padding non-zero, so the
# dot_general's operands need masks.
DOT_OVER_PADDED_CONTRACTION = M42 + f'''
func.func @main(%a: tensor<4x7xf32>, %b: tensor<7x5xf32>) -> tensor<4x5xf32> {{
  %0 = sdy.all_slice [{{}}, {{"y"}}] %a out_sharding=<@mesh, [{{}}, {{"y"}}]> : tensor<4x7xf32>
  %1 = stablehlo.exponential %0 {pv('[{}, {"y"}]')} : tensor<4x7xf32>
  %2 = sdy.all_slice [{{"y"}}, {{"x"}}] %b out_sharding=<@mesh, [{{"y"}}, {{"x"}}]> : tensor<7x5xf32>
  %3 = stablehlo.dot_general %1, %2, contracting_dims = [1] x [0] {pv('[{}, {"x"}]')} : (tensor<4x7xf32>, tensor<7x5xf32>) -> tensor<4x5xf32>
  %4 = sdy.all_reduce {{"y"}} %3 out_sharding=<@mesh, [{{}}, {{"x"}}]> : tensor<4x5xf32>
  %5 = sdy.all_gather [{{}}, {{"x"}}] %4 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<4x5xf32>
  return %5 : tensor<4x5xf32>
}}'''

# Interior padding of a padded operand: the pad needs less high padding, and
# the operand's padding is masked with the pad value.
PAD_INTERIOR = 'sdy.mesh @mesh = <["x"=4]>\n' + f'''
func.func @main(%a: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<15x8xf32> {{
  %0 = stablehlo.slice %a [0:7, 0:8] {pv('[{"x"}, {}]')} : (tensor<8x8xf32>) -> tensor<7x8xf32>
  %cst = stablehlo.constant dense<0.5> : tensor<f32>
  %1 = stablehlo.pad %0, %cst, low = [1, 0], high = [1, 0], interior = [1, 0] {pv('[{"x"}, {}]')} : (tensor<7x8xf32>, tensor<f32>) -> tensor<15x8xf32>
  %2 = sdy.all_gather [{{"x"}}, {{}}] %1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<15x8xf32>
  return %2 : tensor<15x8xf32>
}}'''

# Partial sums over x scattered over 7 rows.
REDUCE_SCATTER = M42 + f'''
func.func @main(%a: tensor<7x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"x"}}]>}},
                %b: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<7x8xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {pv('[{}, {}]')} : (tensor<7x8xf32>, tensor<8x8xf32>) -> tensor<7x8xf32>
  %1 = sdy.reduce_scatter [{{"x"}}, {{}}] %0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<7x8xf32>
  %2 = sdy.all_gather [{{"x"}}, {{}}] %1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<7x8xf32>
  return %2 : tensor<7x8xf32>
}}'''

ALL_TO_ALL = 'sdy.mesh @mesh = <["x"=4]>\n' + f'''
func.func @main(%a: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<7x7xf32> {{
  %0 = stablehlo.slice %a [0:7, 0:7] {pv('[{"x"}, {}]')} : (tensor<8x8xf32>) -> tensor<7x7xf32>
  %1 = stablehlo.tanh %0 {pv('[{"x"}, {}]')} : tensor<7x7xf32>
  %2 = sdy.all_to_all [{{"x"}}: 0->1] %1 out_sharding=<@mesh, [{{}}, {{"x"}}]> : tensor<7x7xf32>
  %3 = sdy.all_gather [{{}}, {{"x"}}] %2 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<7x7xf32>
  return %3 : tensor<7x7xf32>
}}'''

CONVOLUTION = M42 + f'''
func.func @main(%a: tensor<1x4x7x3xf32>, %b: tensor<3x3x3x2xf32>) -> tensor<1x2x5x2xf32> {{
  %0 = sdy.all_slice [{{}}, {{}}, {{}}, {{"y"}}] %a out_sharding=<@mesh, [{{}}, {{}}, {{}}, {{"y"}}]> : tensor<1x4x7x3xf32>
  %1 = sdy.all_slice [{{}}, {{}}, {{"y"}}, {{}}] %b out_sharding=<@mesh, [{{}}, {{}}, {{"y"}}, {{}}]> : tensor<3x3x3x2xf32>
  %2 = stablehlo.convolution(%0, %1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {{stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]}}
      {{batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{}}, {{}}, {{}}]>]>}}
      : (tensor<1x4x7x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x2x5x2xf32>
  %3 = sdy.all_reduce {{"y"}} %2 out_sharding=<@mesh, [{{}}, {{}}, {{}}, {{}}]> : tensor<1x2x5x2xf32>
  return %3 : tensor<1x2x5x2xf32>
}}'''

CASES = {"slice-tanh-gather": SLICE_TANH_GATHER, "dot-over-padded-contraction": DOT_OVER_PADDED_CONTRACTION,
         "pad-interior": PAD_INTERIOR, "reduce-scatter": REDUCE_SCATTER, "all-to-all": ALL_TO_ALL,
         "convolution": CONVOLUTION}


@pytest.mark.parametrize("name", sorted(CASES))
def test_padded_program_computes_the_global_result(name):
    report = simulate_text(CASES[name], f"{name}.mlir", seed=5, pipeline=["--sdy-pad-for-divisibility"])
    assert report.ok, report.text()


def test_sizes_pads_and_cuts():
    out = pad(SLICE_TANH_GATHER)
    assert "high = [1, 0]" in out and "-> tensor<8x8xf32>" in out
    assert "stablehlo.tanh %1 {sdy.sharding" in out and ": tensor<8x8xf32>" in out
    assert "stablehlo.slice %3 [0:7, 0:8]" in out             # the gathered rows cut back to 7
    assert "return %4 : tensor<7x8xf32>" in out


def test_masks_only_where_padding_is_not_known_zero():
    out = pad(DOT_OVER_PADDED_CONTRACTION)
    # the exponential's padding is unknown: its contracting dimension is masked;
    # the all_slice's zero pad needs no mask
    assert out.count("stablehlo.select") == 1
    assert "stablehlo.iota dim = 1" in out and "dense<7> : tensor<i32>" in out
    known = pad(DOT_OVER_PADDED_CONTRACTION.replace("%1, %2, contracting", "%0, %2, contracting"))
    assert "stablehlo.select" not in known


def test_pad_with_interior_padding_shrinks_high_and_masks():
    out = pad(PAD_INTERIOR)
    assert "low = [1, 0], high = [0, 0], interior = [1, 0]" in out
    assert "stablehlo.select" in out and "dense<7> : tensor<i32>" in out


def test_a_padded_value_reaching_an_op_left_alone_is_cut_back():
    text = M42 + f'''
func.func @main(%a: tensor<7x8xf32>) -> tensor<7x8xf32> {{
  %0 = sdy.all_slice [{{"x"}}, {{}}] %a out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<7x8xf32>
  %1 = sdy.reshard %0 <@mesh, [{{}}, {{}}]> : tensor<7x8xf32>
  return %1 : tensor<7x8xf32>
}}'''
    out = pad(text)
    assert "stablehlo.slice %1 [0:7, 0:8] : (tensor<8x8xf32>) -> tensor<7x8xf32>" in out
    assert "sdy.reshard %2" in out


@pytest.mark.parametrize("signature,message", [
    ('(%a: tensor<7x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<7x8xf32>',
     "argument #0 has a non-divisible sharding"),
    ('(%a: tensor<7x8xf32>) -> (tensor<7x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})',
     "result #0 has a non-divisible sharding"),
])
def test_function_io_must_be_divisible(signature, message):
    text = M42 + f"func.func @main{signature} {{\n  return %a : tensor<7x8xf32>\n}}"
    with pytest.raises(SdylogError) as e:
        pad(text)
    assert message in str(e.value) and str(e.value).startswith("t.mlir:2:")
    assert "failed to legalize operation 'func.func'" in str(e.value)


def test_divisible_program_is_unchanged():
    text = M42 + f'''
func.func @main(%a: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<8x8xf32> {{
  %0 = stablehlo.add %a, %a {pv('[{"x"}, {}]')} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}'''
    assert "stablehlo.add %arg0, %arg0 {sdy.sharding" in pad(text) and "pad" not in pad(text).split("func.func")[1]


# A divisible program with a manual computation and a function of its own:
# the look finds nothing to pad.
DIVISIBLE = M42 + f'''
func.func @main(%a: tensor<8x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<8x4xf32> {{
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{{"x"}}, {{}}]>] out_shardings=[<@mesh, [{{"x"}}, {{}}]>]
      manual_axes={{"x"}} (%b: tensor<2x4xf32>) {{
    %1 = stablehlo.negate %b {pv('[{}, {"y"}]')} : tensor<2x4xf32>
    sdy.return %1 : tensor<2x4xf32>
  }} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = call @f(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}}
func.func private @f(%a: tensor<8x4xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x", "y"}}, {{}}]>}}) -> tensor<8x4xf32> {{
  %0 = stablehlo.tanh %a {pv('[{"x", "y"}, {}]')} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}}'''


@pytest.mark.parametrize("text", [*CASES.values(), DIVISIBLE, *lit_modules(
    "pad_for_divisibility", "convert_global_to_local", "reshard_to_collectives.mlir")])
def test_the_look_for_indivisible_dimensions_agrees_with_the_rules(text, monkeypatch):
    assert_look_agrees(text, "--sdy-pad-for-divisibility", pad_for_divisibility, "_some_dimension_indivisible", monkeypatch)


def test_the_look_tells_divisible_from_indivisible(mlir_ctx):
    def look(text):
        module = parse_module(text)
        return pad_for_divisibility._some_dimension_indivisible(module, PassContext())
    assert not look(DIVISIBLE)
    assert all(look(text) for text in CASES.values())
    assert look(DIVISIBLE.replace("tensor<2x4xf32>", "tensor<2x5xf32>").replace("8x4", "8x5"))   # y=2 and 5
