"""The pass sequences around propagation: the same as jaxlib's expanded
`-sdy-propagation-pipeline`, and end to end the same output as Shardy when
propagation itself (and the partitioner step) is Shardy's."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from passes_oracle import ours, ours_steps, same_text, shardy
from sdylog.ir.canonicalization import COLLECTIVE_LABEL
from sdylog.passes.pipelines import (SYMBOL_DCE, ExportOptions, Step, built, canonicalize_step,
                                     export_pipeline_steps, post_propagation_steps, pre_propagation_steps)


def _shardy_pipeline_pass_names(dedup: bool) -> list[str]:
    """Top-level and nested pass names of jaxlib's expanded pipeline."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import passmanager

    flag = "true" if dedup else "false"
    with jax_mlir.make_ir_context():
        text = str(passmanager.PassManager.parse(
            f"builtin.module(sdy-propagation-pipeline{{dedup-functions-fully={flag}}})"))
    text = re.sub(r"\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", "", text)      # options
    text = text.replace("builtin.module(", "").replace("func.func(", "").replace(")", "")
    return [name.strip() for name in text.split(",") if name.strip()]


@pytest.mark.parametrize("dedup", [False, True])
def test_steps_are_jaxlibs_pipeline(dedup):
    names = [n for n in _shardy_pipeline_pass_names(dedup) if n != "sdy-save-module"]
    ours_names = [s.name for s in pre_propagation_steps(dedup)] + ["sdy-user-priority-propagate"] + \
                 [s.name for s in post_propagation_steps(dedup)]
    assert ours_names == names
    assert SYMBOL_DCE in names


PROGRAM = '''
sdy.mesh @m = <["p"=2, "q"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}]>}, %b: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<0.5> : tensor<8x8xf32>
  %0 = call @layer(%a, %c) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @layer(%b, %c) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <@m, [{}, {"q"}]> : tensor<8x8xf32>
  %3:2 = stablehlo.while(%i = %0, %j = %2) : tensor<8x8xf32>, tensor<8x8xf32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %s = stablehlo.add %i, %j : tensor<8x8xf32>
      stablehlo.return %s, %j : tensor<8x8xf32>, tensor<8x8xf32>
    }
  %dead = stablehlo.negate %3#1 : tensor<8x8xf32>
  return %3#0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @layer(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
'''


def _through_shardy_propagation(text: str, dedup: bool) -> str:
    text = ours_steps(text, pre_propagation_steps(dedup))
    text = shardy(text, "sdy-user-priority-propagate{keep-sharding-rules=true}")
    post = post_propagation_steps(dedup)
    cut = [s.name for s in post].index("sdy-insert-explicit-reshards")
    text = ours_steps(text, post[:cut])
    text = shardy(text, "sdy-insert-explicit-reshards{enable-full-version=false}")
    return ours_steps(text, post[cut + 1:])


@pytest.mark.parametrize("dedup", [False, True])
def test_import_and_export_around_shardy_propagation(dedup):
    flag = "true" if dedup else "false"
    expected = shardy(PROGRAM, f"sdy-propagation-pipeline{{dedup-functions-fully={flag}}}")
    assert same_text(_through_shardy_propagation(PROGRAM, dedup), expected)


@pytest.mark.parametrize("dedup", [False, True])
def test_import_pipeline_pass(dedup):
    out = ours(PROGRAM, "sdy-import-pipeline", options={"dedup-functions-fully": dedup})
    flag = "true" if dedup else "false"
    assert same_text(out, shardy(PROGRAM, f"sdy-import-pipeline{{dedup-functions-fully={flag}}}"))


# --- the shared census and verification after changing steps ---------------------------
BARRIER = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.optimization_barrier %a : tensor<8xf32>
  %1 = sdy.sharding_constraint %0 <@m, [{"p"}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}'''


def _counting(monkeypatch):
    """Counts of census walks while run_steps runs."""
    from sdylog.passes import census
    counts = {"census": 0}
    walk = census.Census.of

    def counted_walk(module):
        counts["census"] += 1
        return walk(module)
    monkeypatch.setattr(census.Census, "of", staticmethod(counted_walk))
    return counts


def _run(text: str, names: list):
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.pipelines import Step, run_steps
    module = parse_module(text, "f.mlir")
    ctx = PassContext(filename="f.mlir")
    with module.context:
        run_steps(module, ctx, [n if isinstance(n, Step) else Step(n) for n in names])
    assert ctx.census is None   # the shared census does not outlive the pipeline
    return module


def test_steps_with_nothing_to_do_share_one_census(monkeypatch):
    counts = _counting(monkeypatch)
    module = _run(BARRIER, ["sdy-manual-axes-cleanup", "sdy-sharding-group-import",
                            "sdy-remove-sharding-groups", "sdy-export-named-computations"])
    assert counts == {"census": 1}
    assert "sdy.sharding_constraint" in str(module)


def test_a_changing_step_renews_the_census(monkeypatch):
    counts = _counting(monkeypatch)
    module = _run(BARRIER, ["sdy-manual-axes-cleanup", "sdy-sharding-constraint-to-reshard",
                            "sdy-sharding-group-import", "sdy-remove-sharding-groups"])
    assert counts == {"census": 2}
    assert "sdy.reshard" in str(module) and "sdy.sharding_constraint" not in str(module)


# Two equal constants (merged by the merger, then reshaped by a live op), a
# dead op (canonicalize), and a sharding rule (drop-sharding-rules).
CONSTANTS = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = sdy.constant dense<1.0> : tensor<8xf32>
  %c1 = sdy.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %c0, %c1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i], [i])->([i]) {i=8}>} : tensor<8xf32>
  %1 = stablehlo.negate %a : tensor<8xf32>
  %2 = stablehlo.add %0, %a : tensor<8xf32>
  return %2 : tensor<8xf32>
}'''


def test_steps_that_change_attributes_keep_the_census(monkeypatch):
    """The merger erases constants (Invalidated with their names, and the
    census' lists without them): no step walks again; the attribute passes
    change no op (SHARDINGS_ONLY, or ATTRIBUTES_ONLY): the first walk serves
    them all."""
    counts = _counting(monkeypatch)
    module = _run(CONSTANTS, ["sdy-constant-or-scalar-merger", "sdy-sink-data-flow-edges",
                              "sdy-remove-sharding-groups", "sdy-close-shardings",
                              "sdy-drop-sharding-rules", "sdy-manual-axes-cleanup"])
    assert counts == {"census": 1}
    text = str(module)
    assert text.count("sdy.constant") == 1 and "sdy.sharding_rule" not in text
    assert '[{"p"}]' in text and "stablehlo.negate" in text
    # canonicalize reads the census for its first sweep; erasing is a change
    counts["census"] = 0
    module = _run(CONSTANTS, ["sdy-manual-axes-cleanup", canonicalize_step(COLLECTIVE_LABEL),
                              "sdy-manual-axes-cleanup"])
    assert counts == {"census": 2} and "stablehlo.negate" not in str(module)


def test_the_splitter_keeps_the_census_for_other_ops(monkeypatch):
    counts = _counting(monkeypatch)
    module = _run(CONSTANTS, ["sdy-constant-or-scalar-splitter", "sdy-manual-axes-cleanup",
                              "sdy-add-data-flow-edges", "sdy-sharding-group-import"])
    assert counts == {"census": 1}
    assert str(module).count("sdy.constant") == 2


# Two members of a group start apart: propagation's sync puts open constraints
# after them (Invalidated) before the rules run.
GROUPS = '''sdy.mesh @m = <["p"=2, "q"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>},
                %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>}) -> tensor<8xf32> {
  sdy.sharding_group %a group_id=0 : tensor<8xf32>
  sdy.sharding_group %b group_id=0 : tensor<8xf32>
  %0 = stablehlo.add %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}'''


@pytest.mark.parametrize("text, reshards", [(BARRIER, 1), (GROUPS, 2)])
def test_the_propagation_pipeline_shares_one_census(monkeypatch, text, reshards):
    """Import, propagation (attributes only, or new constraints for groups
    that start apart) and export read one census: propagation walks only
    for the facts' op lists (when a step made the census' out of date),
    which export then reads, and the whole takes fewer walks than the
    phases on their own, with the same output."""
    import traceback

    from sdylog.ir import parse_module
    from sdylog.passes import PassContext, census
    from sdylog.passes.propagation_pipeline import export_phase, import_phase, propagation_phase, run
    walks = []
    walk = census.Census.of

    def counted_walk(module):
        walks.append([frame.name for frame in traceback.extract_stack()])
        return walk(module)
    monkeypatch.setattr(census.Census, "of", staticmethod(counted_walk))

    def pipeline(phases):
        module = parse_module(text, "f.mlir")
        ctx = PassContext(filename="f.mlir")
        with module.context:
            phases(module, ctx)
        assert ctx.census is None   # the shared census does not outlive the pipeline
        return str(module)

    def one_by_one(module, ctx):
        import_phase(module, ctx)
        propagation_phase(module, ctx)
        export_phase(module, ctx)
    expected = pipeline(one_by_one)
    apart = len(walks)
    walks.clear()
    assert pipeline(lambda module, ctx: run(module, {}, ctx)) == expected
    assert all("extract_facts" in stack for stack in walks if "propagation_phase" in stack)
    assert len(walks) < apart
    assert expected.count("sdy.reshard") == reshards   # (export turns constraints into reshards)


def test_an_invalid_pipeline_result_is_an_error_of_sdylog_opt():
    """The steps are not verified one by one; `sdylog opt` verifies the
    pipeline's result as a whole (here a pipeline-like pass list)."""
    from sdylog.ir import SdylogError
    from sdylog.ir.module import verify_module
    module = _run(BARRIER, ["sdy-add-data-flow-edges", "sdy-add-data-flow-edges"])
    with pytest.raises(SdylogError, match=r"f\.mlir:3:8: error: 'sdy.data_flow_edge' op expected input"):
        verify_module(module, "f.mlir")


def test_sdylog_opt_verifies_the_pipeline_result_not_its_steps(monkeypatch):
    """Inside -sdy-propagation-pipeline the import and export steps are not
    verified; the driver verifies the result after the pass."""
    from jaxlib.mlir import ir
    from sdylog.passes import driver, pipelines
    verified, in_steps = [], []
    verify, run_steps = ir.Operation.verify, pipelines.run_steps

    def counted_verify(op):
        verified.append("in steps" if in_steps else "outside")
        return verify(op)

    def marked_run_steps(*args, **kwargs):
        in_steps.append(1)
        try:
            return run_steps(*args, **kwargs)
        finally:
            in_steps.pop()
    monkeypatch.setattr(ir.Operation, "verify", counted_verify)
    monkeypatch.setattr(pipelines, "run_steps", marked_run_steps)
    passes = driver.parse_flags(["-sdy-propagation-pipeline"])
    monkeypatch.setattr(driver, "verify_module", lambda m, f="-": verified.append("driver"))
    text = driver.optimize_text(BARRIER, "f.mlir", passes)
    assert "in steps" not in verified and verified[-1] == "driver"
    assert "sdy.reshard" in text


@pytest.mark.parametrize("flags, verifications", [
    (["-sdy-propagation-pipeline", "-sdy-export-pipeline"], 2),   # (both change it: each verified)
    (["-sdy-add-data-flow-edges", "-sdy-remove-sharding-groups"], 1),   # (the second leaves it as it was)
    (["-sdy-remove-sharding-groups", "-sdy-drop-sharding-rules"], 0)])   # (neither does: as parsed)
def test_sdylog_opt_verifies_after_each_pass_that_changed_the_module(monkeypatch, flags, verifications):
    from sdylog.passes import driver
    verified = []
    verify = driver.verify_module
    monkeypatch.setattr(driver, "verify_module", lambda m, f="-": verified.append(f) or verify(m, f))
    driver.optimize_text(BARRIER, "f.mlir", driver.parse_flags(flags))
    assert verified == ["f.mlir"] * verifications


@pytest.mark.parametrize("flags", [
    ["-sdy-add-data-flow-edges", "-sdy-add-data-flow-edges"],
    # (sinking the edges would make the module valid again: the invalid
    # one in between is still an error, as in sdy_opt)
    ["-sdy-add-data-flow-edges", "-sdy-add-data-flow-edges", "-sdy-sink-data-flow-edges"]])
def test_an_invalid_result_of_a_pass_is_an_error_of_sdylog_opt(flags):
    from sdylog.ir import SdylogError
    from sdylog.passes import driver
    with pytest.raises(SdylogError, match=r"f\.mlir:3:8: error: 'sdy.data_flow_edge' op expected input"):
        driver.optimize_text(BARRIER, "f.mlir", driver.parse_flags(flags))


def test_sdylog_opt_exits_1_at_an_invalid_intermediate_module(tmp_path):
    from click.testing import CliRunner
    from sdylog.cli import main
    path = tmp_path / "barrier.mlir"
    path.write_text(BARRIER + "\n")
    r = CliRunner().invoke(main, ["opt", str(path), "-sdy-add-data-flow-edges", "-sdy-add-data-flow-edges",
                                  "-sdy-sink-data-flow-edges"])
    assert r.exit_code == 1
    assert r.stdout == ""
    assert f"{path}:3:8: error: 'sdy.data_flow_edge' op expected input" in r.stderr


def test_propagation_attaches_no_sharding_rules():
    """Shardy's pipeline keeps the rules for sdy-insert-explicit-reshards;
    ours builds the same ones from the registry there: propagation attaches
    none (only the rule the input gave its add stays)."""
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.propagation_pipeline import import_phase, propagation_phase

    module = parse_module(CONSTANTS, "f.mlir")
    ctx = PassContext(filename="f.mlir")
    with module.context:
        import_phase(module, ctx)
        propagation_phase(module, ctx)
    assert str(module).count("sdy.sharding_rule") == 1


# Constants and a scalar expansion with several users (cloned), one left to
# its only user, constants inside a reduce's body, a dead constant (erased).
SPLIT_IN_PLACE = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32>, %s: tensor<f32>) -> (tensor<8xf32>, tensor<f32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %dead = stablehlo.constant dense<3.0> : tensor<8xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %n = stablehlo.negate %c : tensor<8xf32>
  %0 = stablehlo.add %a, %c : tensor<8xf32>
  %1 = stablehlo.multiply %0, %n : tensor<8xf32>
  %2 = stablehlo.add %1, %b : tensor<8xf32>
  %3 = stablehlo.subtract %2, %b : tensor<8xf32>
  %4 = stablehlo.add %3, %n : tensor<8xf32>
  %r = stablehlo.reduce(%4 init: %z) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
   reducer(%x: tensor<f32>, %y: tensor<f32>) {
    %k = stablehlo.constant dense<2.0> : tensor<f32>
    %m = stablehlo.multiply %x, %k : tensor<f32>
    %t = stablehlo.add %m, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }
  return %4, %r : tensor<8xf32>, tensor<f32>
}'''


def test_the_splitter_says_which_ops_it_touched(monkeypatch):
    """The splitter tells the census the names of the ops it replaced,
    cloned and erased: the lists it keeps are those of a fresh walk; the
    output is Shardy's."""
    from sdylog.ir import parse_module, print_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import Invalidated, census, shared_census
    from sdylog.passes.constant_or_scalar_splitter import run as split
    from test_census import assert_agrees_with_walk
    module = parse_module(SPLIT_IN_PLACE, "f.mlir")
    ctx = PassContext(filename="f.mlir")
    with module.context, shared_census(ctx):
        shared = census(module, ctx)
        change = split(module, {}, ctx)
        assert change == Invalidated(frozenset({"stablehlo.constant", "sdy.constant", "stablehlo.broadcast_in_dim",
                                                "stablehlo.negate"}))
        shared.follow(change)
        assert_agrees_with_walk(shared)
        assert "stablehlo.add" in shared.by_name   # (the ops of other names are kept)
        out = print_module(module)
    assert same_text(out, shardy(SPLIT_IN_PLACE, "sdy-constant-or-scalar-splitter"))
    assert out.count("sdy.constant") == 5 and "3.0" not in out


# --- a group of steps is not run again on the module it left ----------------------------
# Every step of the export's clean-up group has something to do here: a
# data-flow edge, a sharding group, a constraint, a non-divisible argument
# and result, a sub-axis in an open dimension, open dimensions, replicated axes.
CLEANUP = '''sdy.mesh @m = <["p"=4, "q"=2]>
func.func @main(%a: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p", ?}, {"q", ?}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p":(1)2, "q", ?}, {}]>})
    -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {?}], replicated={"q"}>}, tensor<8x8xf32>) {
  sdy.sharding_group %a group_id=0 : tensor<6x8xf32>
  %0 = stablehlo.optimization_barrier %a : tensor<6x8xf32>
  %1 = sdy.data_flow_edge %0 sharding=<@m, [{"q", ?}, {?}]> : tensor<6x8xf32>
  %2 = sdy.sharding_constraint %1 <@m, [{}, {"q"}]> : tensor<6x8xf32>
  %3 = stablehlo.negate %b {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}, {?}]>]>} : tensor<8x8xf32>
  return %2, %3 : tensor<6x8xf32>, tensor<8x8xf32>
}'''


def _cleanup_steps(avoid_export: bool) -> list:
    from sdylog.passes.pipelines import EXPORT_CLEANUP, ExportOptions, export_pipeline_steps
    steps = export_pipeline_steps(ExportOptions(avoid_export_for_partitioning=avoid_export))
    return [s for s in steps if s.group == EXPORT_CLEANUP]


def _after_propagation(path):
    """A corpus model as the propagation pipeline leaves it just after its
    export's clean-up group."""
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import shared_census
    from sdylog.passes.pipelines import EXPORT_CLEANUP, post_propagation_steps, run_steps
    from sdylog.passes.propagation_pipeline import import_phase, propagation_phase
    module = parse_module(path.read_text(), str(path))
    ctx = PassContext(filename=str(path))
    post = post_propagation_steps()
    last = max(i for i, s in enumerate(post) if s.group == EXPORT_CLEANUP)
    with module.context, shared_census(ctx):
        import_phase(module, ctx)
        propagation_phase(module, ctx)
        run_steps(module, ctx, post[:last + 1])
    return module


def _cleanup_inputs():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
    from small_models import small_models  # (tests/commands' corpus)
    return [("CLEANUP", avoid) for avoid in (False, True)] + [(p, False) for p in small_models()]


@pytest.mark.parametrize("source, avoid_export", _cleanup_inputs(),
                         ids=lambda x: getattr(x, "stem", str(x)))
def test_the_export_cleanup_run_again_on_what_it_left_finds_nothing_to_do(source, avoid_export):
    """What run_steps relies on to skip the group (the plain reference: run
    it again, step by step)."""
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import PRESERVED
    from sdylog.passes.pipelines import _run_step
    steps = _cleanup_steps(avoid_export)
    if source == "CLEANUP":
        module = _run(CLEANUP, steps)
        assert str(module) != str(parse_module(CLEANUP, "f.mlir"))
    else:
        module = _after_propagation(source)
    left = str(module)
    with module.context:
        results = [_run_step(module, PassContext(filename="f.mlir"), step) for step in steps]
    assert results == [PRESERVED] * len(steps) and str(module) == left


def test_a_group_runs_again_only_after_a_change(monkeypatch):
    """The export pipeline after the propagation pipeline skips the clean-up
    group, which the propagation's export ran on the module as it is; after
    a change it runs it; the output is the same as when every step runs."""
    from sdylog.passes import driver, pipelines
    ran = []
    run_step = pipelines._run_step
    monkeypatch.setattr(pipelines, "_run_step", lambda m, ctx, step: ran.append(step.name) or run_step(m, ctx, step))
    close = "sdy-close-shardings"

    def opt(flags):
        ran.clear()
        return driver.optimize_text(BARRIER, "f.mlir", driver.parse_flags(flags))
    both = opt(["-sdy-propagation-pipeline", "-sdy-export-pipeline"])
    assert ran.count(close) == 1
    after_change = opt(["-sdy-propagation-pipeline", "-sdy-add-data-flow-edges", "-sdy-export-pipeline"])
    assert ran.count(close) == 2 and "sdy.data_flow_edge" not in after_change
    _without_groups(monkeypatch)
    assert opt(["-sdy-propagation-pipeline", "-sdy-export-pipeline"]) == both and ran.count(close) == 2


def _without_groups(monkeypatch):
    """Every step runs alone and in no group, so none is skipped."""
    from dataclasses import replace

    from sdylog.passes import pipelines
    monkeypatch.setattr(pipelines, "_runs", lambda steps: [[replace(s, group="")] for s in steps])


def test_a_group_with_other_options_runs_again(monkeypatch):
    """The clean-up group of an export that avoids export for partitioning
    leaves sharding constraints as they are; a later export with default
    options has other steps in that group, so runs it: its constraints
    become reshards."""
    from sdylog.passes import driver, pipelines
    ran = []
    run_step = pipelines._run_step
    monkeypatch.setattr(pipelines, "_run_step", lambda m, ctx, step: ran.append(step.name) or run_step(m, ctx, step))
    to_reshard = "sdy-sharding-constraint-to-reshard"

    def opt():
        ran.clear()
        return driver.optimize_text(CLEANUP, "f.mlir", driver.parse_flags(
            ["-sdy-export-pipeline=avoid-export-for-partitioning=true", "-sdy-export-pipeline"]))
    out = opt()
    assert ran.count(to_reshard) == 1 and ran.count("sdy-close-shardings") == 2
    assert "sdy.sharding_constraint" not in out and "sdy.reshard" in out
    _without_groups(monkeypatch)
    assert opt() == out and ran.count("sdy-close-shardings") == 2


def test_steps_built_once_are_those_built_anew():
    """The pipelines' steps are built once per process (pipelines.built)."""
    from sdylog.passes.pipelines import (ExportOptions, built, export_pipeline_steps, import_pipeline_steps,
                                         post_propagation_steps, pre_propagation_steps)
    for steps_of in (import_pipeline_steps, pre_propagation_steps, post_propagation_steps):
        for dedup in (False, True):
            assert built(steps_of, dedup) == tuple(steps_of(dedup))
            assert built(steps_of, dedup) is built(steps_of, dedup)
    options = ExportOptions(enable_insert_explicit_collectives=True)
    assert built(export_pipeline_steps, options) == tuple(export_pipeline_steps(options))


def test_a_step_s_options_cannot_change_in_place():
    # (built steps are shared by every run of the process: pipelines.built)
    given = {"enable-full-version": True}
    step = Step("sdy-insert-explicit-reshards", given)
    given["enable-full-version"] = False
    assert step.options == {"enable-full-version": True}
    with pytest.raises(TypeError):
        step.options["enable-full-version"] = False
    shared = built(export_pipeline_steps, ExportOptions())
    with pytest.raises(TypeError):
        shared[-1].options["x"] = 1
