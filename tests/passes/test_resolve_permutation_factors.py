"""-sdy-resolve-permutation-factors: permutation factors that would need data
exchange are replicated around their op; communication-free ones stay."""
from __future__ import annotations

import re

import pytest

from quick_look_cases import lit_modules
from sdylog.ir import parse_module, print_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import PassContext, resolve_permutation_factors
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

MESH = 'sdy.mesh @mesh = <["a"=4, "b"=2]>\n'
FLAG = "--sdy-resolve-permutation-factors=enable-halo-exchange=false"


def resolve(text):
    return optimize_text(text, "t.mlir", parse_flags([FLAG]))


def pad(low, high, in_rows, out_rows, sharding='[{"a"}, {"b"}]'):
    return MESH + f'''
func.func @main(%a: tensor<{in_rows}x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}})
    -> (tensor<{out_rows}x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) {{
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %a, %c, low = [{low}, 0], high = [{high}, 0], interior = [0, 0]
    {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {sharding}>]>}} : (tensor<{in_rows}x8xf32>, tensor<f32>) -> tensor<{out_rows}x8xf32>
  return %0 : tensor<{out_rows}x8xf32>
}}'''


def test_a_shifting_pad_is_replicated_around():
    out = resolve(pad(-1, 5, 8, 12))
    assert 'sdy.reshard %arg0 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>' in out
    assert 'stablehlo.pad %0, %cst, low = [-1, 0], high = [5, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"b"}]>]>}' in out
    assert 'sdy.reshard %1 <@mesh, [{"a"}, {"b"}]> : tensor<12x8xf32>' in out
    assert "return %2" in out


def test_a_communication_free_pad_stays():
    # 8 rows over 2 devices padded by 4 on each side: each shard's rows stay on it
    out = resolve(pad(4, 4, 8, 16, '[{"b"}, {}]'))
    assert "sdy.reshard" not in out


def test_a_communication_free_slice_stays_and_a_shifted_one_does_not():
    text = MESH + '''
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<7x8xf32>, tensor<6x8xf32>) {
  %0 = stablehlo.slice %a [0:7, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<7x8xf32>
  %1 = stablehlo.slice %a [2:8, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<6x8xf32>
  return %0, %1 : tensor<7x8xf32>, tensor<6x8xf32>
}'''
    out = resolve(text)
    assert "stablehlo.slice %arg0 [0:7, 0:8] {sdy.sharding" in out
    assert 'sdy.reshard %arg0 <@mesh, [{}, {}]>' in out and 'sdy.reshard %2 <@mesh, [{"a"}, {}]> : tensor<6x8xf32>' in out


def test_ops_without_permutation_factors_are_left_alone():
    text = MESH + '''
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}'''
    assert "sdy.reshard" not in resolve(text)


@pytest.mark.parametrize("low,high,in_rows,out_rows", [(-1, 5, 8, 12), (3, 1, 8, 12)])
def test_resolved_pad_computes_the_global_result(low, high, in_rows, out_rows):
    # the reshards left become collectives by hand here (reshard-to-collectives is another pass)
    out = resolve(pad(low, high, in_rows, out_rows))
    out = out.replace('sdy.reshard %arg0 <@mesh, [{}, {"b"}]>',
                      'sdy.all_gather [{"a"}, {}] %arg0 out_sharding=<@mesh, [{}, {"b"}]>')
    out = out.replace('sdy.reshard %1 <@mesh, [{"a"}, {"b"}]>',
                      'sdy.all_slice [{"a"}, {}] %1 out_sharding=<@mesh, [{"a"}, {"b"}]>')
    report = simulate_text(out, "pad.mlir", seed=2)
    assert report.ok, report.text()


RESHAPE = 'sdy.mesh @mesh = <["a"=4]>\n' + '''
func.func @main(%a: tensor<8x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{}}]>}}) -> tensor<{out}xi32> {{
  %0 = stablehlo.slice %a [0:6, 0:2] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{}}]>]>}} : (tensor<8x2xi32>) -> tensor<6x2xi32>
  %1 = stablehlo.reshape %0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {sharding}>]>}} : (tensor<6x2xi32>) -> tensor<{out}xi32>
  return %1 : tensor<{out}xi32>
}}'''


def test_an_indivisible_split_reshape_is_replicated_around():
    out = resolve(RESHAPE.format(out="2x3x2", sharding='[{"a":(1)2}, {"a":(2)2}, {}]'))
    assert 'sdy.reshard %0 <@mesh, [{}, {}]> : tensor<6x2xi32>' in out
    assert 'stablehlo.reshape %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}]>]>}' in out
    assert 'sdy.reshard %2 <@mesh, [{"a":(1)2}, {"a":(2)2}, {}]> : tensor<2x3x2xi32>' in out


def test_a_reshape_keeping_each_device_block_in_place_stays():
    # 6 rows over 4 devices (blocks of 2) become 3 x 2: the blocks are the same rows
    out = resolve(RESHAPE.format(out="3x2x2", sharding='[{"a"}, {}, {}]'))
    assert "sdy.reshard" not in out


HALO = "--sdy-resolve-permutation-factors=enable-halo-exchange=true"


def test_halo_exchange_of_a_shifting_pad():
    out = optimize_text(pad(-1, 5, 8, 12), "t.mlir", parse_flags([HALO]))
    assert "sdy.reshard" not in out
    assert 'manual_axes={"a", "b"}' in out
    # each device's window reaches two blocks to the right: its own block, then two permuted ones
    assert out.count('"stablehlo.collective_permute"') == 2
    assert "stablehlo.concatenate %arg1, %1, %2, dim = 0" in out
    assert "source_target_pairs = dense<[[2, 0], [3, 1], [4, 2], [5, 3], [6, 4], [7, 5]]>" in out
    assert "source_target_pairs = dense<[[4, 0], [5, 1], [6, 2], [7, 3]]>" in out


def test_halo_exchange_leaves_pads_without_communication_alone():
    out = optimize_text(pad(4, 4, 8, 16, '[{"b"}, {}]'), "t.mlir", parse_flags([HALO]))
    assert "manual_computation" not in out and "sdy.reshard" not in out


@pytest.mark.parametrize("op", [
    'stablehlo.pad %a, %c, low = [-1, 0], high = [5, 0], interior = [0, 0] {sh} : (tensor<8x8xf32>, tensor<f32>) -> tensor<12x8xf32>',
    'stablehlo.pad %a, %c, low = [3, 1], high = [1, 1], interior = [0, 0] {sh} : (tensor<8x8xf32>, tensor<f32>) -> tensor<12x10xf32>',
    'stablehlo.pad %a, %c, low = [1, 0], high = [3, 0], interior = [1, 0] {sh} : (tensor<8x8xf32>, tensor<f32>) -> tensor<19x8xf32>',
    'stablehlo.slice %a [2:8, 0:8] {sh} : (tensor<8x8xf32>) -> tensor<6x8xf32>',
])
def test_halo_exchange_computes_the_global_result(op):
    sh = '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>}'
    result = op.rsplit("-> ", 1)[1]
    text = MESH + f'''
func.func @main(%a: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{}}]>}}) -> {result} {{
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %0 = {op.replace("{sh}", sh)}
  %1 = sdy.all_gather [{{"a"}}, {{}}] %0 out_sharding=<@mesh, [{{}}, {{}}]> : {result}
  return %1 : {result}
}}'''
    report = simulate_text(text, "halo.mlir", seed=4, pipeline=[HALO, "--sdy-pad-for-divisibility"])
    assert report.ok, report.text()


@pytest.mark.parametrize("rows", [5, 6])
def test_halo_reverse_computes_the_global_result(rows):
    # 5 rows over 2 devices: padded high, shifted right by one, reversed on a
    # mesh of reversed device order, and moved back (reshard-to-collectives
    # is another pass: the reshard between the two device orders is written
    # as the collective_permute it becomes)
    text = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n' + f'''
func.func @main(%a: tensor<6x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{"b"}}]>}}) -> tensor<{rows}x8xf32> {{
  %0 = stablehlo.slice %a [0:{rows}, 0:8] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{"b"}}]>]>}} : (tensor<6x8xf32>) -> tensor<{rows}x8xf32>
  %1 = stablehlo.reverse %0, dims = [0] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{"b"}}]>]>}} : tensor<{rows}x8xf32>
  %2 = sdy.all_gather [{{"a"}}, {{"b"}}] %1 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<{rows}x8xf32>
  return %2 : tensor<{rows}x8xf32>
}}'''
    out = optimize_text(text, "t.mlir", parse_flags([HALO]))
    assert 'sdy.mesh @mesh_reversed = <["a"=2, "b"=2], device_ids=[2, 3, 0, 1]>' in out
    assert ("manual_computation" in out) == (rows == 5)
    out = re.sub(r"sdy.reshard (%\w+) <@mesh, ([^>]*)>", r"sdy.collective_permute \1 out_sharding=<@mesh, \2>", out)
    report = simulate_text(out, "reverse.mlir", seed=6, pipeline=["--sdy-pad-for-divisibility"])
    assert report.ok, report.text()


def test_halo_exchange_of_an_indivisible_split_reshape():
    # 6 rows over 4 devices (blocks of 2, the last one padding) split into
    # 2 x 3 on "a":(1)2 x "a":(2)2 (blocks of 1 x 2): the third and fourth
    # blocks start one row into the block of their left neighbour
    out = optimize_text(RESHAPE.format(out="2x3x2", sharding='[{"a":(1)2}, {"a":(2)2}, {}]'), "t.mlir",
                        parse_flags([HALO]))
    assert "sdy.reshard" not in out
    assert 'out_shardings=[<@mesh, [{"a":(1)2}, {"a":(2)2}, {}]>] manual_axes={"a"}' in out
    assert "source_target_pairs = dense<[[0, 1], [1, 2], [2, 3]]>" in out
    assert "stablehlo.constant dense<[4, 4, 3, 3]> : tensor<4xi64>" in out
    assert "-> tensor<1x2x2xi32>" in out   # the local reshape of the 2-row window


@pytest.mark.parametrize("rows,out,sharding", [
    (6, "2x3x2", '[{"a":(1)2}, {"a":(2)2}, {}]'),
    (6, "12", '[{"a"}]'),                              # a merge: replicated around (no halo group)
    (12, "2x6x2", '[{"a":(1)2}, {"a":(2)2}, {}]'),   # divisible: nothing to exchange
])
def test_halo_reshape_computes_the_global_result(rows, out, sharding):
    text = 'sdy.mesh @mesh = <["a"=4]>\n' + f'''
func.func @main(%a: tensor<16x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{}}]>}}) -> tensor<{out}xi32> {{
  %0 = stablehlo.slice %a [0:{rows}, 0:2] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{}}]>]>}} : (tensor<16x2xi32>) -> tensor<{rows}x2xi32>
  %1 = stablehlo.reshape %0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {sharding}>]>}} : (tensor<{rows}x2xi32>) -> tensor<{out}xi32>
  %2 = sdy.reshard %1 <@mesh, [{", ".join("{}" for _ in out.split("x"))}]> : tensor<{out}xi32>
  return %2 : tensor<{out}xi32>
}}'''
    report = simulate_text(text, "reshape.mlir", seed=3,
                           pipeline=[HALO, "--sdy-reshard-to-collectives", "--sdy-pad-for-divisibility"])
    assert report.ok, report.text()


# An op whose own rule has a permutation factor, whatever its name says.
ADD_WITH_RULE = MESH + '''
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>,
    sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8} permutation={i}>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}'''


def test_an_op_with_a_rule_of_its_own_is_seen():
    assert 'sdy.reshard %arg0 <@mesh, [{}, {"b"}]>' in resolve(ADD_WITH_RULE)


def _resolved(text: str, flag: str, every_op: bool) -> str:
    """The pass on the facts of the ops the rules ask about, or (`every_op`,
    the reference) on those of every op."""
    module = parse_module(text, "t.mlir")
    options = parse_flags([flag]).passes[0][1]
    with module.context:
        try:
            if every_op:
                resolve_permutation_factors.resolve(module, options, PassContext(filename="t.mlir"))
            else:
                resolve_permutation_factors.run(module, options, PassContext(filename="t.mlir"))
        except SdylogError as e:
            return f"error: {e}"
        return print_module(module)


@pytest.mark.parametrize("flag", [FLAG, HALO])
@pytest.mark.parametrize("text", [pad(-1, 5, 8, 12), pad(4, 4, 8, 16, '[{"b"}, {}]'), ADD_WITH_RULE,
                                  RESHAPE.format(out="2x3x2", sharding='[{"a":(1)2}, {"a":(2)2}, {}]'),
                                  *lit_modules("resolve_permutation_factors.mlir", "resolve_permutation_factors",
                                               *(f"insert_explicit_reshards/{name}.mlir" for name in (
                                                   "pad_slice", "reverse", "convolution", "concatenate",
                                                   "reduce_window_select_and_scatter", "reshape")))])
def test_the_ops_the_rules_see_are_enough(text, flag):
    assert _resolved(text, flag, every_op=False) == _resolved(text, flag, every_op=True)


# 3 rows over "a"=4 (blocks of 1) padded high by 1: shards 0-2 read their own
# row; shard 3 starts at row 3, past the 3 rows of data, so it reads nothing
# and is all padding (halo_all_padding). No shard reads another's data, yet
# halo_comm_dim counts the dimension as not local, so the halo path builds the
# pad in a manual computation where device 3's window is cut from the pad value.
# (Simulation cannot tell this from a local pad: pad-for-divisibility masks the
# padding row either way; the printed IR pins the rule.)
ALL_PADDING_SHARD = 'sdy.mesh @mesh = <["a"=4]>\n' + '''
func.func @main(%a: tensor<3x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<4x8xf32> {
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %0 = stablehlo.pad %a, %c, low = [0, 0], high = [1, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<3x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = sdy.all_gather [{"a"}, {}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}'''


def test_halo_exchange_of_a_pad_with_an_all_padding_shard():
    out = optimize_text(ALL_PADDING_SHARD, "t.mlir", parse_flags([HALO]))
    assert "sdy.reshard" not in out
    assert 'out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"}' in out
    # nothing to fetch from a neighbour: the buffer is the own row between
    # one row of padding on each side (tile padding, as every halo buffer)
    assert "collective_permute" not in out
    assert "stablehlo.concatenate %arg1, dim = 0" in out
    assert "low = [1, 0], high = [1, 0], interior = [0, 0]" in out
    assert "-> tensor<3x8xf32>" in out


def test_without_halo_exchange_a_pad_with_an_all_padding_shard_stays():
    # Shardy's block check (free_pad_dim): every result block's rows come from
    # the same operand block or from the padding, so the pad keeps its sharding
    out = resolve(ALL_PADDING_SHARD)
    assert "sdy.reshard" not in out and "manual_computation" not in out
    assert 'stablehlo.pad %arg0, %cst, low = [0, 0], high = [1, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>}' in out


# 12 rows over "a"=8 (blocks of 2, the operand padded to 16) split into 2 x 6
# on "a":(1)2 x "a":(2)4: shard t = 4i + j (blocks of 1 x 2) starts at row
# s = 6i + 2j: 0, 2, 4, 6, 6, 8, 10, 12. Shard 7 starts at row 12, past the
# 12 rows of data (reshape_halo_past_data); its window is padding that the
# final slice to 2 x 6 drops.
RESHAPE_PAST_DATA = 'sdy.mesh @mesh = <["a"=8]>\n' + '''
func.func @main(%a: tensor<12x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<2x6x2xi32> {
  %1 = stablehlo.reshape %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a":(1)2}, {"a":(2)4}, {}]>]>} : (tensor<12x2xi32>) -> tensor<2x6x2xi32>
  %2 = sdy.reshard %1 <@mesh, [{}, {}, {}]> : tensor<2x6x2xi32>
  return %2 : tensor<2x6x2xi32>
}'''


def test_halo_exchange_of_a_split_reshape_with_a_shard_past_the_data():
    out = optimize_text(RESHAPE_PAST_DATA, "t.mlir", parse_flags([HALO]))
    assert 'out_shardings=[<@mesh, [{"a":(1)2}, {"a":(2)4}, {}]>] manual_axes={"a"}' in out
    # shards 4-6 start one block left of their own (first = s / 2 = 3, 4, 5):
    # one hop left, none right, so each device receives its left neighbour's block
    assert "source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7]]>" in out
    assert "stablehlo.concatenate %4, %arg1, dim = 0" in out
    assert "low = [2, 0], high = [2, 0], interior = [0, 0]" in out   # tile padding: 8 rows
    # reshape_halo_offset, buffer = 2 rows padding, left block, own block, 2 rows padding:
    # shards 0-3 (first = t) start at their own block, 2 + 2 = 4; shards 4-6
    # (first = t - 1, s = 2 * first) at the left block, 2; shard 7, past the
    # data, at its own block (tile + left * tile = 4): one entry per shard
    assert "stablehlo.constant dense<[4, 4, 4, 4, 2, 2, 2, 4]> : tensor<8xi64>" in out
    assert "stablehlo.slice %1 [0:2, 0:6, 0:2]" in out


def test_without_halo_exchange_a_split_reshape_past_the_data_is_replicated_around():
    out = resolve(RESHAPE_PAST_DATA)
    assert "manual_computation" not in out
    assert 'sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<12x2xi32>' in out
    assert 'sdy.reshard %1 <@mesh, [{"a":(1)2}, {"a":(2)4}, {}]> : tensor<2x6x2xi32>' in out


def _fed_by_a_slice(text, rows, padded_rows, cols, dtype):
    """`text` with its argument %a of `rows` rows cut from a divisible one
    (function IO must divide: pad-for-divisibility rejects it otherwise)."""
    arg = f"tensor<{padded_rows}x{cols}x{dtype}>"
    sliced = f"tensor<{rows}x{cols}x{dtype}>"
    text = text.replace(f"%a: {sliced}", f"%a: {arg}")
    body = text.index("{\n", text.index("func.func")) + 2
    cut = (f"  %s = stablehlo.slice %a [0:{rows}, 0:{cols}] {{sdy.sharding = #sdy.sharding_per_value<"
           f'[<@mesh, [{{"a"}}, {{}}]>]>}} : ({arg}) -> {sliced}\n')
    return text[:body] + cut + text[body:].replace("%a", "%s")


@pytest.mark.parametrize("text", [_fed_by_a_slice(ALL_PADDING_SHARD, 3, 4, 8, "f32"),
                                  _fed_by_a_slice(RESHAPE_PAST_DATA, 12, 16, 2, "i32")])
def test_halo_exchange_past_the_data_computes_the_global_result(text):
    report = simulate_text(text, "past.mlir", seed=5,
                           pipeline=[HALO, "--sdy-reshard-to-collectives", "--sdy-pad-for-divisibility"])
    assert report.ok, report.text()
