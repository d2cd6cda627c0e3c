"""-canonicalize with Shardy's sdy-reshard and sdy-collective patterns, on
modules of our own, against Shardy's canonicalizer (jaxlib)."""
from __future__ import annotations

import pytest
from passes_oracle import ours, same_text, shardy

from sdylog.ir import SdylogError
from sdylog.passes.driver import parse_flags

MESH = 'sdy.mesh @m = <["x"=2, "y"=2, "z"=2]>\n'


def module(body: str, arg: str = '[{"x"}, {"y"}]', ty: str = "tensor<8x8xf32>", results: str | None = None) -> str:
    results = results or ty
    return MESH + (f'func.func @f(%arg0: {ty} {{sdy.sharding = #sdy.sharding<@m, {arg}>}}) -> {results} {{\n'
                   f'{body}\n}}\n')


def canonicalize(text: str, label: str, **options) -> str:
    return ours(text, "canonicalize", options={"enable-patterns": (label,), **options})


def shardy_canonicalize(text: str, label: str) -> str:
    return shardy(text, f"canonicalize{{enable-patterns={label}}}")


COLLECTIVE_CASES = {
    "no_op_collectives": module(
        '%0 = sdy.all_gather [{}, {}] %arg0 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        '%1 = sdy.all_slice [{}, {}] %0 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        '%2 = sdy.all_reduce {} %1 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        '%3 = sdy.reduce_scatter [{}, {}] %2 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        '%4 = sdy.collective_permute %3 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        'return %4 : tensor<8x8xf32>'),
    "slice_undoes_gather": module(
        '%0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@m, [{}, {"y"}]> : tensor<8x8xf32>\n'
        '%1 = sdy.all_slice [{"x"}, {}] %0 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        '%2 = sdy.all_slice [{"z"}, {}] %0 out_sharding=<@m, [{"z"}, {"y"}]> : tensor<8x8xf32>\n'
        'return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>', results="(tensor<8x8xf32>, tensor<8x8xf32>)"),
    "reduce_of_replicated_to_unreduced": module(
        '%0 = sdy.replicated_to_unreduced {"z"} %arg0 out_sharding=<@m, [{"x"}, {"y"}], unreduced={"z"}> : tensor<8x8xf32>\n'
        '%1 = sdy.all_reduce {"z"} %0 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
        'return %1 : tensor<8x8xf32>'),
    "reduce_of_sharded_to_unreduced": module(
        '%0 = sdy.sharded_to_unreduced [{"x"}, {"y"}] %arg0 out_sharding=<@m, [{}, {}], unreduced={"x", "y"}> : tensor<8x8xf32>\n'
        '%1 = sdy.all_reduce {"x", "y"} %0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n'
        'return %1 : tensor<8x8xf32>'),
    "all_to_all_chain": module(
        '%0 = sdy.all_to_all [{"x"}: 0->2] %arg0 out_sharding=<@m, [{}, {"y"}, {"x"}, {}]> : tensor<8x8x8x8xf32>\n'
        '%1 = sdy.all_to_all [{"y"}: 1->3] %0 out_sharding=<@m, [{}, {}, {"x"}, {"y"}]> : tensor<8x8x8x8xf32>\n'
        '%2 = sdy.all_to_all [{"x"}: 2->0] %1 out_sharding=<@m, [{"x"}, {}, {}, {"y"}]> : tensor<8x8x8x8xf32>\n'
        '%3 = sdy.all_to_all [{"y"}: 1->2] %0 out_sharding=<@m, [{}, {}, {"x", "y"}, {}]> : tensor<8x8x8x8xf32>\n'
        'return %2 : tensor<8x8x8x8xf32>',
        arg='[{"x"}, {"y"}, {}, {}]', ty="tensor<8x8x8x8xf32>"),
    "reduce_scatter_fusion": module(
        '%0 = sdy.all_reduce {"x", "z"} %arg0 out_sharding=<@m, [{}, {"y"}]> : tensor<8x8xf32>\n'
        '%1 = sdy.all_slice [{"x", "z"}, {}] %0 out_sharding=<@m, [{"x", "z"}, {"y"}]> : tensor<8x8xf32>\n'
        '%2 = sdy.all_slice [{"x", "z"}, {}] %0 out_sharding=<@m, [{"x", "z"}, {"y"}]> : tensor<8x8xf32>\n'
        '%3 = stablehlo.add %1, %2 : tensor<8x8xf32>\n'
        'return %3 : tensor<8x8xf32>', arg='[{}, {"y"}]'),
    "reduce_scatter_fusion_with_residual": module(
        '%0 = sdy.all_reduce {"z"} %arg0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n'
        '%1 = sdy.all_slice [{"z", "x"}, {"y"}] %0 out_sharding=<@m, [{"z", "x"}, {"y"}]> : tensor<8x8xf32>\n'
        'return %1 : tensor<8x8xf32>', arg='[{}, {}]'),
    "reduce_scatter_needs_every_axis": module(
        '%0 = sdy.all_reduce {"x", "z"} %arg0 out_sharding=<@m, [{}, {}]> : tensor<8x8xf32>\n'
        '%1 = sdy.all_slice [{"y", "z"}, {}] %0 out_sharding=<@m, [{"y", "z"}, {}]> : tensor<8x8xf32>\n'
        'return %1 : tensor<8x8xf32>', arg='[{}, {}]'),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVE_CASES))
def test_collective_patterns_match_shardy(name):
    text = COLLECTIVE_CASES[name]
    assert same_text(canonicalize(text, "sdy-collective"), shardy_canonicalize(text, "sdy-collective"))


def test_collective_patterns_outputs():
    out = canonicalize(COLLECTIVE_CASES["no_op_collectives"], "sdy-collective")
    assert "return %arg0" in out and "out_sharding" not in out
    out = canonicalize(COLLECTIVE_CASES["reduce_of_sharded_to_unreduced"], "sdy-collective")
    assert 'sdy.all_gather [{"x"}, {"y"}] %arg0 out_sharding=<@m, [{}, {}]>' in out
    out = canonicalize(COLLECTIVE_CASES["all_to_all_chain"], "sdy-collective")
    # %1 and %2 fuse (params sorted by source dimension); the unused %3 goes;
    # %0 and the fused one both move dimensions 0 and 2: not fused
    assert 'sdy.all_to_all [{"y"}: 1->3, {"x"}: 2->0] %0' in out
    assert out.count("sdy.all_to_all") == 2
    out = canonicalize(COLLECTIVE_CASES["reduce_scatter_fusion_with_residual"], "sdy-collective")
    assert 'sdy.reduce_scatter [{"z"}, {}] %arg0 out_sharding=<@m, [{"z"}, {}]>' in out
    assert 'sdy.all_slice [{"x"}, {"y"}] %0 out_sharding=<@m, [{"z", "x"}, {"y"}]>' in out
    assert "sdy.reduce_scatter" not in canonicalize(COLLECTIVE_CASES["reduce_scatter_needs_every_axis"],
                                                    "sdy-collective")


RESHARDS = module(
    '%0 = sdy.reshard %arg0 <@m, [{"y"}, {}]> : tensor<8x8xf32>\n'
    '%1 = sdy.reshard %0 <@m, [{}, {"z"}]> : tensor<8x8xf32>\n'
    '%2 = sdy.reshard %1 <@m, [{"x"}, {}]> : tensor<8x8xf32>\n'
    '%3 = sdy.reshard %arg0 <@m, [{"z"}, {}]> : tensor<8x8xf32>\n'
    '%4 = sdy.reshard %3 <@m, [{}, {"x"}]> : tensor<8x8xf32>\n'
    '%5 = sdy.reshard %3 <@m, [{}, {"y"}]> : tensor<8x8xf32>\n'
    'return %2, %4, %5 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>',
    results="(tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)")


@pytest.mark.parametrize("top_down", [True, False])
def test_reshard_of_reshard(top_down):
    out = canonicalize(RESHARDS, "sdy-reshard", **{"top-down": top_down})
    assert 'sdy.reshard %arg0 <@m, [{"x"}, {}]>' in out          # the chain of three is one
    assert out.count("sdy.reshard") == 4                          # %3 has two users: kept
    assert same_text(out, shardy_canonicalize(RESHARDS, "sdy-reshard"))


def test_labels_select_patterns():
    assert "sdy.reshard %0" in canonicalize(RESHARDS, "sdy-collective")
    text = COLLECTIVE_CASES["no_op_collectives"]
    assert "sdy.all_gather" in canonicalize(text, "sdy-reshard")
    assert "sdy.all_gather" in ours(text, "canonicalize", options={"disable-patterns": ("AllGatherNoopPattern",)})
    with pytest.raises(SdylogError, match="no pattern or label 'sdy-nothing'"):
        canonicalize(text, "sdy-nothing")


def test_command_line_forms():
    inv = parse_flags(["-canonicalize=enable-patterns=sdy-reshard,sdy-collective top-down=false"])
    ((name, options),) = inv.passes
    assert name == "canonicalize"
    assert options["enable-patterns"] == ("sdy-reshard", "sdy-collective") and options["top-down"] is False
    ((_, options),) = parse_flags(["--canonicalize"]).passes
    assert options["enable-patterns"] == () and options["top-down"] is True


# A dead op, constants to hoist and dedup, reshards: each run has something to do.
DEAD_AND_CONSTANTS = module(
    '%0 = stablehlo.negate %arg0 : tensor<8x8xf32>\n'
    '%1 = sdy.reshard %arg0 <@m, [{"y"}, {}]> : tensor<8x8xf32>\n'
    '%2 = stablehlo.constant dense<1.0> : tensor<8x8xf32>\n'
    '%3 = stablehlo.constant dense<1.0> : tensor<8x8xf32>\n'
    '%4 = stablehlo.add %2, %3 : tensor<8x8xf32>\n'
    '%5 = stablehlo.add %1, %4 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x"}, {"y"}]>]>} : tensor<8x8xf32>\n'
    '%6 = sdy.all_gather [{}, {}] %5 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<8x8xf32>\n'
    'return %6 : tensor<8x8xf32>')


@pytest.mark.parametrize("name", [*sorted(COLLECTIVE_CASES), "DEAD_AND_CONSTANTS"])
def test_a_run_after_one_that_changed_nothing_skips_the_sweeps(name, monkeypatch):
    """Canonicalize steps in one scope: one on the module a run that changed
    nothing left (no step since) does not look for dead ops and constants
    again (`settled`); the result is that of each run on its own (the
    plain reference)."""
    from passes_oracle import ours_steps

    from sdylog.ir import greedy
    from sdylog.ir.canonicalization import COLLECTIVE_LABEL, RESHARD_LABEL
    from sdylog.passes import canonicalize as canonicalize_pass
    from sdylog.passes.pipelines import canonicalize_step
    text = COLLECTIVE_CASES.get(name) or DEAD_AND_CONSTANTS
    settled = []
    monkeypatch.setattr(canonicalize_pass, "apply_greedily",
                        lambda *a, **k: settled.append(k["settled"]) or greedy.apply_greedily(*a, **k))
    labels = [RESHARD_LABEL, RESHARD_LABEL, COLLECTIVE_LABEL, COLLECTIVE_LABEL]
    texts = [ours(text)]   # (as parsed, then after each run on its own)
    for label in labels:
        texts.append(canonicalize(texts[-1], label, **{"top-down": False}))
    settled.clear()
    out = ours_steps(text, [canonicalize_step(label) for label in labels])
    assert same_text(out, texts[-1])
    # settled: the run before changed nothing (the first run has none before it)
    assert settled == [False] + [same_text(a, b) for a, b in zip(texts, texts[1:-1])]
    assert any(settled)


SETTLED_THEN_CHANGED = module(
    '%0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>\n'
    '%1 = stablehlo.constant dense<2.0> : tensor<8x8xf32>\n'
    '%2 = stablehlo.add %arg0, %0 : tensor<8x8xf32>\n'
    '%3 = stablehlo.add %2, %1 : tensor<8x8xf32>\n'
    '%4 = stablehlo.custom_call @keep(%arg0) {has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n'
    'return %3 : tensor<8x8xf32>')


def _attributes_only_change(module, options, ctx, result):
    """A step that makes a dead op and a duplicate constant by attributes
    alone: the custom call loses its side effect, the second constant's
    value becomes the first's."""
    ops = list(module.body.operations[1].regions[0].blocks[0].operations)
    del ops[4].attributes["has_side_effect"]
    ops[1].attributes["value"] = ops[0].attributes["value"]
    return result


@pytest.mark.parametrize("result", ["attributes only", "data-flow edges", "anything", "preserved (a lie)"])
def test_a_step_that_changed_the_module_between_runs_brings_the_sweeps_back(result, monkeypatch):
    """canonicalize, a step reporting a change, canonicalize: the second run
    looks for dead ops and constants again (the first changed nothing), so
    the dead op and the duplicate constant that only the step made go. (A
    step that claims PRESERVED is believed: the sweep is skipped.)"""
    from types import SimpleNamespace

    from passes_oracle import ours_steps

    from sdylog.ir import greedy
    from sdylog.ir.canonicalization import RESHARD_LABEL
    from sdylog.passes import PASSES
    from sdylog.passes import canonicalize as canonicalize_pass
    from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED, Invalidated
    from sdylog.passes.pipelines import Step, canonicalize_step
    reported = {"attributes only": ATTRIBUTES_ONLY, "data-flow edges": Invalidated(frozenset({"sdy.data_flow_edge"})),
                "anything": None, "preserved (a lie)": PRESERVED}[result]
    change = lambda module, options, ctx: _attributes_only_change(module, options, ctx, reported)   # noqa: E731
    monkeypatch.setitem(PASSES, "test-change-attributes", SimpleNamespace(options={}, load=lambda: change))
    settled = []
    monkeypatch.setattr(canonicalize_pass, "apply_greedily",
                        lambda *a, **k: settled.append(k["settled"]) or greedy.apply_greedily(*a, **k))
    step = canonicalize_step(RESHARD_LABEL)
    assert same_text(ours_steps(SETTLED_THEN_CHANGED, [step]), ours(SETTLED_THEN_CHANGED))   # (changes nothing)
    settled.clear()
    out = ours_steps(SETTLED_THEN_CHANGED, [step, Step("test-change-attributes"), step])
    swept = result != "preserved (a lie)"
    assert settled == [False, not swept]
    assert ("custom_call" not in out and out.count("stablehlo.constant") == 1) == swept
