"""The pass sequences Shardy's `-sdy-propagation-pipeline` runs around propagation.

Where the sequences come from: `addImportPipeline` (import/import_pipeline.cc),
`addPropagationPipeline` (propagation/propagation_pipeline.cc) and
`addExportPipeline` (export/export_pipeline.cc) of openxla/shardy as of
mid-June 2026: after `sdy-insert-func-call-reshards` joined the pipeline
(37c77393) and before d62c224b (2026-06-23; jaxlib's Shardy still ignores
unreduced axes when comparing shardings) and 019d995a (which added
`sdy-verify-unreduced-axes`). `-sdy-propagation-pipeline` passes
`inlineMeshes=false` and default options otherwise. tests/passes/test_pipelines.py
checks them against the pipeline jaxlib's Shardy prints (the oracle is used
there only; nothing here runs it).

`-sdy-import-pipeline` (registered here as a pass):
    symbol-dce, sdy-lift-inlined-meshes, sdy-remove-size-one-axes,
    sdy-propagate-sharding-from-func-to-call, sdy-constant-or-scalar-splitter,
    symbol-dce, sdy-manual-axes-cleanup, (save-module), sdy-add-data-flow-edges,
    and with dedup-functions-fully: sdy-apply-sharding-constraints,
    sdy-sharding-group-import.

`-sdy-propagation-pipeline`, before propagation (`run_import_pipeline`):
    the import pipeline, then
    conservative (default):  sdy-flatten-call-graph, symbol-dce,
        sdy-import-func-calls, symbol-dce, sdy-apply-sharding-constraints,
        sdy-sharding-group-import;
    dedup-functions-fully:   sdy-add-func-data-flow-edges;
    then sdy-pre-order-funcs.
    (Propagation: sdy-user-priority-propagate with keep-sharding-rules=true,
    which here holds only when the partitioner is registered: see
    propagation_pipeline.propagation_phase.)

after propagation (`run_export_propagation_steps`):
    conservative: sdy-export-named-computations, sdy-propagate-to-func-results;
    dedup:        sdy-propagate-to-func-results, sdy-sink-func-data-flow-edges;
    then sdy-unflatten-call-graph (dedup-functions-fully=false in both modes:
    that is what jaxlib's pipeline passes), symbol-dce,
    sdy-insert-func-call-reshards, and the export pipeline:
    sdy-constant-or-scalar-merger, sdy-sink-data-flow-edges,
    sdy-remove-sharding-groups, sdy-sharding-constraint-to-reshard,
    sdy-update-non-divisible-input-output-shardings,
    sdy-remove-sub-axes-in-input-output-shardings, sdy-close-shardings,
    (save-module), sdy-insert-explicit-reshards{enable-full-version=false},
    canonicalize{enable-patterns=sdy-collective}, (save-module),
    sdy-drop-sharding-rules.

Verification: none between the steps. MLIR's pass manager verifies after
every pass, but here the input was verified when it was parsed, and a step
can only make it invalid through a bug of ours; each verification walks the
whole module (about 1 ms per transformer layer). Whoever runs a pipeline
verifies its result once, before using or printing it: `sdylog opt` verifies
after every pass it runs, a whole pipeline being one pass (as sdy_opt does
for `-sdy-propagation-pipeline`). A pass list given to `sdylog opt` is still
verified after each pass.

`save-module` only dumps files for debugging and is left out. `symbol-dce` is
MLIR's; we run our own (sdylog.ir.symbols.symbol_dce). The canonicalizer step
is sdylog's -canonicalize restricted to the `sdy-collective` patterns, as
Shardy's export builds it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sdylog.ir.symbols import symbol_dce
from sdylog.passes import lookup
from sdylog.passes.census import UNCHANGED, follow_step, shared_census

SYMBOL_DCE = "symbol-dce"


@dataclass(frozen=True)
class Step:
    """One pass of a pipeline: a PASSES flag (or symbol-dce / canonicalize) and
    the options Shardy runs it with (the rest take their defaults)."""
    name: str
    options: dict = field(default_factory=dict)


# Shardy's export runs the canonicalizer on its sdy-collective patterns, bottom-up (MLIR's default config).
CANONICALIZE_COLLECTIVES = Step("canonicalize", {"enable-patterns": ("sdy-collective",), "top-down": False})


def import_pipeline_steps(dedup_functions_fully: bool = False) -> list[Step]:
    """What `-sdy-import-pipeline` runs."""
    steps = [Step(SYMBOL_DCE), Step("sdy-lift-inlined-meshes"), Step("sdy-remove-size-one-axes"),
             Step("sdy-propagate-sharding-from-func-to-call"), Step("sdy-constant-or-scalar-splitter"),
             Step(SYMBOL_DCE), Step("sdy-manual-axes-cleanup"), Step("sdy-add-data-flow-edges")]
    if dedup_functions_fully:
        steps += [Step("sdy-apply-sharding-constraints"), Step("sdy-sharding-group-import")]
    return steps


def pre_propagation_steps(dedup_functions_fully: bool = False) -> list[Step]:
    """What `-sdy-propagation-pipeline` runs before propagating."""
    steps = import_pipeline_steps(dedup_functions_fully)
    if dedup_functions_fully:
        steps += [Step("sdy-add-func-data-flow-edges")]
    else:
        steps += [Step("sdy-flatten-call-graph"), Step(SYMBOL_DCE),
                  Step("sdy-import-func-calls", {"add-data-flow-edges-on-named-computations": True}),
                  Step(SYMBOL_DCE), Step("sdy-apply-sharding-constraints"), Step("sdy-sharding-group-import")]
    return steps + [Step("sdy-pre-order-funcs")]


def export_pipeline_steps() -> list[Step]:
    """The part of `addExportPipeline` that `-sdy-propagation-pipeline` runs
    (default export options, meshes not inlined)."""
    return [Step("sdy-constant-or-scalar-merger"), Step("sdy-sink-data-flow-edges"),
            Step("sdy-remove-sharding-groups"), Step("sdy-sharding-constraint-to-reshard"),
            Step("sdy-update-non-divisible-input-output-shardings"),
            Step("sdy-remove-sub-axes-in-input-output-shardings"), Step("sdy-close-shardings"),
            Step("sdy-insert-explicit-reshards", {"enable-full-version": False}),
            CANONICALIZE_COLLECTIVES, Step("sdy-drop-sharding-rules")]


def post_propagation_steps(dedup_functions_fully: bool = False) -> list[Step]:
    """What `-sdy-propagation-pipeline` runs after propagating."""
    if dedup_functions_fully:
        steps = [Step("sdy-propagate-to-func-results"), Step("sdy-sink-func-data-flow-edges")]
    else:
        steps = [Step("sdy-export-named-computations"), Step("sdy-propagate-to-func-results")]
    steps += [Step("sdy-unflatten-call-graph", {"dedup-functions-fully": False}), Step(SYMBOL_DCE),
              Step("sdy-insert-func-call-reshards")]
    return steps + export_pipeline_steps()


def run_steps(module, ctx, steps: list[Step]) -> None:
    """Run `steps` in order, without verifying in between (the caller verifies
    the result: see the module docstring). The steps share one census of the
    module for as long as their results allow (sdylog/passes/census.py), the
    caller's if it opened one."""
    with shared_census(ctx):
        for step in steps:
            follow_step(ctx, _run_step(module, ctx, step))


def _run_step(module, ctx, step: Step):
    """The step's result: what it did to the module (census.py: UNCHANGED,
    SameOps, NewOps, or None for anything else)."""
    if step.name == SYMBOL_DCE:
        with module.context:
            return UNCHANGED if symbol_dce(module) == 0 else None
    return _run_pass(module, ctx, step)


def _run_pass(module, ctx, step: Step):
    info = lookup(step.name)
    options = dict(info.options)
    options.update(step.options)
    return info.load()(module, options, ctx)


def _dedup(options: dict | None) -> bool:
    return bool((options or {}).get("dedup-functions-fully", False))


def run_import_pipeline(module, ctx, options: dict | None = None) -> None:
    """Everything `-sdy-propagation-pipeline` runs before propagation.
    options: {"dedup-functions-fully": bool}."""
    run_steps(module, ctx, pre_propagation_steps(_dedup(options)))


def run_export_propagation_steps(module, ctx, options: dict | None = None) -> None:
    """Everything `-sdy-propagation-pipeline` runs after propagation.
    options: {"dedup-functions-fully": bool}."""
    run_steps(module, ctx, post_propagation_steps(_dedup(options)))


def run(module, options: dict, ctx) -> None:
    """-sdy-import-pipeline."""
    run_steps(module, ctx, import_pipeline_steps(_dedup(options)))
