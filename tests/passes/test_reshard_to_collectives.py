"""-sdy-reshard-to-collectives on reshards of our own: explicit expectations,
Shardy's (jaxlib) output for the same inputs, random reshards against
Shardy, and the per-device programs run on a simulated mesh."""
from __future__ import annotations

import os
import random

import pytest
from passes_oracle import ours, same_text, shardy
from reshard_cases import reshard_case

from sdylog.ir import SdylogError, parse_module
from sdylog.ir.module import verify_module
from sdylog.passes import PassContext, lookup

PASS = "sdy-reshard-to-collectives"
# How many random reshards to compare with Shardy (SDYLOG_DIFF_CASES=2000 for a long run).
CASES = int(os.environ.get("SDYLOG_DIFF_CASES", "60"))

MESHES = '''sdy.mesh @m = <["a"=2, "b"=4, "c"=3]>
sdy.mesh @m_rev = <["a"=2, "b"=4, "c"=3], device_ids=[23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]>
sdy.mesh @other = <["p"=4]>
'''


def func(name: str, arg: str, body: str, ty: str = "tensor<8x8xf32>") -> str:
    sharding = f" {{sdy.sharding = #sdy.sharding{arg}}}" if arg else ""
    return f"func.func @{name}(%arg0: {ty}{sharding}) -> {ty} {{\n{body}\n}}\n"


CASES_BY_NAME = {
    # an axis moves to another dimension: one all_to_all
    "swap_dims": (func("swap_dims", '<@m, [{"a"}, {"b"}]>',
                       '%0 = sdy.reshard %arg0 <@m, [{}, {"b", "a"}]> : tensor<8x8xf32>\nreturn %0 : tensor<8x8xf32>'),
                  ['sdy.all_to_all [{"a"}: 0->1] %arg0 out_sharding=<@m, [{}, {"b", "a"}]>']),
    # the minor half of an axis is gathered
    "gather_sub_axis": (func("gather_sub_axis", '<@m, [{"b"}]>',
                             '%0 = sdy.reshard %arg0 <@m, [{"b":(1)2}]> : tensor<8xf32>\nreturn %0 : tensor<8xf32>',
                             "tensor<8xf32>"),
                        ['sdy.all_gather [{"b":(2)2}] %arg0 out_sharding=<@m, [{"b":(1)2}]>']),
    # sizes 2 and 3 do not divide each other: through the larger sharding
    "coprime_axes": (func("coprime_axes", '<@m, [{"a"}]>',
                          '%0 = sdy.reshard %arg0 <@m, [{"c"}]> : tensor<12xf32>\nreturn %0 : tensor<12xf32>',
                          "tensor<12xf32>"),
                     ['sdy.all_slice [{"c"}] %arg0 out_sharding=<@m, [{"a", "c"}]>',
                      'sdy.collective_permute %0 out_sharding=<@m, [{"c", "a"}]>',
                      'sdy.all_gather [{"a"}] %1 out_sharding=<@m, [{"c"}]>']),
    # another device order: the collective_permute moves to the target mesh
    "device_order": (func("device_order", '<@m, [{"a"}]>',
                          '%0 = sdy.reshard %arg0 <@m_rev, [{"b"}]> : tensor<8xf32>\nreturn %0 : tensor<8xf32>',
                          "tensor<8xf32>"),
                     ['sdy.all_slice [{"b":(1)2}] %arg0 out_sharding=<@m, [{"a", "b":(1)2}]>',
                      'sdy.collective_permute %0 out_sharding=<@m_rev, [{"b"}]>']),
    # past the barrier; unreduced axes kept on every collective
    "barrier_unreduced": (func("barrier_unreduced", '<@m, [{"b"}, {}], unreduced={"a"}>',
                               '%0 = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : tensor<8x8xf32>\n'
                               '%1 = sdy.reshard %0 <@m, [{}, {"b"}], unreduced={"a"}> : tensor<8x8xf32>\n'
                               'return %1 : tensor<8x8xf32>'),
                          ['sdy.all_to_all [{"b"}: 0->1] %arg0 out_sharding=<@m, [{}, {"b"}], unreduced={"a"}>']),
    # an operand without sharding is replicated on the target's mesh
    "no_operand_sharding": (func("no_operand_sharding", "",
                                 '%0 = sdy.reshard %arg0 <@m, [{"b", ?}, {}]> : tensor<8x8xf32>\nreturn %0 : tensor<8x8xf32>'),
                            ['sdy.all_slice [{"b"}, {}] %arg0 out_sharding=<@m, [{"b"}, {}]>']),
    # another mesh's axes: the reshard stays, unless the target is replicated
    "other_mesh": (func("other_mesh", '<@m, [{"b"}]>',
                        '%0 = sdy.reshard %arg0 <@other, [{"p"}]> : tensor<8xf32>\n'
                        '%1 = sdy.reshard %0 <@other, [{}]> : tensor<8xf32>\nreturn %1 : tensor<8xf32>',
                        "tensor<8xf32>"),
                   ['%0 = sdy.reshard %arg0 <@other, [{"p"}]>',
                    'sdy.all_gather [{"p"}] %0 out_sharding=<@other, [{}]>']),
}


@pytest.mark.parametrize("name", sorted(CASES_BY_NAME))
def test_own_cases_match_expectations_and_shardy(name):
    text, expected = CASES_BY_NAME[name]
    text = MESHES + text
    out = ours(text, PASS)
    for line in expected:
        assert line in out, (line, out)
    assert "sdy.reshard %arg0 <@m" not in out
    assert same_text(out, shardy(text, PASS))


def test_keep_redundant_reshards():
    text = MESHES + func("f", '<@m, [{"a"}, {"b"}]>',
                         '%0 = sdy.reshard %arg0 <@m, [{"a", ?}, {"b"}]> : tensor<8x8xf32>\n'
                         '%1 = sdy.reshard %0 <@m, [{"b"}, {"a"}]> : tensor<8x8xf32>\nreturn %1 : tensor<8x8xf32>')
    kept = ours(text, PASS, options={"keep-redundant-reshards": True})
    assert 'sdy.reshard %arg0 <@m, [{"a", ?}, {"b"}]>' in kept
    assert "sdy.collective_permute" in kept
    assert "sdy.reshard" not in ours(text, PASS)
    spec = f"{PASS}{{keep-redundant-reshards=true}}"
    assert same_text(kept, shardy(text, spec))


def test_single_device_mesh_stays():
    text = '''sdy.mesh @m = <["a"=2]>
sdy.mesh @one = <[], device_ids=[1]>
func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tensor<8xf32> {
  %0 = sdy.reshard %arg0 <@one, []> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
'''
    assert "sdy.reshard %arg0 <@one, []>" in ours(text, PASS)


def test_reshard_whose_operand_was_rewritten_onto_another_mesh_fails():
    # The second reshard is illegal on the module as it came in (operand and
    # target on @other), but its operand's sharding after the first rewrite
    # is on @m: as Shardy, an error, and nothing printed.
    text = '''sdy.mesh @m = <["a"=2, "b"=4]>
sdy.mesh @other = <["p"=8]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"b"}]>}) -> tensor<8xf32> {
  %0 = sdy.reshard %arg0 <@other, [{}]> : tensor<8xf32>
  %1 = sdy.reshard %0 <@other, [{"p"}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}
'''
    with pytest.raises(SdylogError, match="5:8: error: failed to legalize operation 'sdy.reshard'"):
        ours(text, PASS)
    with pytest.raises(RuntimeError):
        shardy(text, PASS)


def test_report_gives_bytes_per_device_from_the_rules():
    # 24x8 f32 on x=6: S = 4x8x4 = 128 bytes, all_gather over 6: 5*S
    text = '''sdy.mesh @m = <["x"=6, "y"=2]>
func.func @main(%arg0: tensor<24x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>}) -> tensor<24x8xf32> {
  %0 = sdy.reshard %arg0 <@m, [{}, {"y"}]> : tensor<24x8xf32>
  return %0 : tensor<24x8xf32>
}
'''
    module = parse_module(text, "t.mlir")
    ctx = PassContext(filename="t.mlir")
    with module.context:
        lookup(PASS).load()(module, {"keep-redundant-reshards": False}, ctx)
    report = ctx.report["reshard_to_collectives"]
    (reshard,) = report["reshards"]
    # all_slice y (free), then all_gather x of the 4x4 block: 5 * 64 bytes
    assert reshard["collectives"] == [{"kind": "all_slice", "axes": '[{}, {"y"}]', "bytes_per_device": 0},
                                      {"kind": "all_gather", "axes": '[{"x"}, {}]', "bytes_per_device": 320}]
    assert reshard["location"] == "t.mlir:3:8" and reshard["bytes_per_device"] == 320
    assert report["bytes_per_device"] == 320


def test_report_agrees_with_the_costs_of_the_module_collectives():
    from sdylog.partition.collective_costs import module_collectives
    rng = random.Random(4)
    checked = 0
    while checked < 10:
        try:
            module = parse_module(reshard_case(rng))
        except SdylogError:
            continue
        with module.context:
            ctx = PassContext()
            try:
                lookup(PASS).load()(module, {"keep-redundant-reshards": False}, ctx)
            except SdylogError:
                continue
            report = ctx.report["reshard_to_collectives"]
            costs = module_collectives(module)
        assert [(c["kind"], c["axes"], c["bytes_per_device"]) for c in costs] == \
            [(c["kind"], c["axes"], c["bytes_per_device"]) for r in report["reshards"] for c in r["collectives"]]
        assert report["bytes_per_device"] == sum(c["bytes_per_device"] for c in costs)
        checked += 1


def _ours_or_error(text: str) -> str:
    module = parse_module(text)
    with module.context:
        try:
            lookup(PASS).load()(module, {"keep-redundant-reshards": False}, PassContext(derive="write-back"))
            verify_module(module)
        except SdylogError:
            return "error"
        return str(module)


def _shardy_or_error(text: str) -> str:
    try:
        return shardy(text, PASS)
    except RuntimeError:
        return "error"


def test_random_reshards_match_shardy():
    rng = random.Random(18)
    compared = 0
    for _ in range(CASES):
        text = reshard_case(rng)
        try:
            parse_module(text)
        except SdylogError:
            continue   # (shardings the verifier rejects: sub-axes that cannot coexist)
        assert same_text(_ours_or_error(text), _shardy_or_error(text)), text
        compared += 1
    assert compared > CASES // 2


def test_random_reshards_compute_the_same_on_a_simulated_mesh():
    from sdylog.simulate.simulate import simulate_text
    rng = random.Random(7)
    ran = 0
    while ran < max(CASES // 6, 8):
        text = reshard_case(rng, divisible=True)
        try:
            parse_module(text)
        except SdylogError:
            continue
        report = simulate_text(text, "case.mlir", pipeline=["-" + PASS])
        assert report.ok, text + report.text()
        ran += 1
