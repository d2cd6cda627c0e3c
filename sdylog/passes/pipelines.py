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
for `-sdy-propagation-pipeline`; sdylog/passes/driver.py run_passes).

`save-module` only dumps files for debugging: it is a step only when a
dump directory is given. `symbol-dce` is MLIR's; we run our own
(sdylog.ir.symbols.symbol_dce). The canonicalizer steps are sdylog's
`canonicalize` with one label's patterns, as Shardy builds them.
`-sdy-propagation-pipeline` runs its export's own reshard step (the
non-full `sdy-insert-explicit-reshards`), as Shardy does.

`-sdy-export-pipeline` with all its options (export_pipeline_steps, Shardy
as of the conformance tests: with sdy-verify-unreduced-axes), the
partitioner's sequence of Shardy's executable tests (partitioner_steps,
`-sdy-partitioner-pipeline`) and the one `-sdy-per-instruction-partitioning`
runs on each op (per_instruction_steps) are here too; a pass they name that
sdylog does not have yet is left out with a warning (registered_steps).
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType

from sdylog.ir.canonicalization import COLLECTIVE_LABEL, RESHARD_LABEL
from sdylog.ir.symbols import symbol_dce
from sdylog.passes import PASSES, lookup
from sdylog.passes.census import FOLLOWED, PRESERVED, census, changes, follow_step, shared_census

SYMBOL_DCE = "symbol-dce"

# The export's clean-up group (export_pipeline_steps): data-flow edges sunk,
# constraints made reshards, input and output shardings made divisible and
# cut at sub-axes, shardings closed. None of these undoes what another did,
# so run again on what they left (`-sdy-export-pipeline` after
# `-sdy-propagation-pipeline`, whose export runs them too) they find nothing
# to do. (The constant merger that comes before is not in it: closing makes
# shardings equal, and so constants mergeable, that were not.)
EXPORT_CLEANUP = "export-cleanup"


@dataclass(frozen=True)
class Step:
    """One pass of a pipeline: a PASSES flag (or symbol-dce / canonicalize) and
    the options Shardy runs it with (the rest take their defaults).
    `group`: the name of the run of consecutive steps it belongs to, if
    any, which changes nothing when run again on the module it left
    (run_steps skips it then; tests/passes/test_pipelines.py checks it)."""
    name: str
    options: Mapping = field(default_factory=dict)
    # (not compared: a step is its pass and options wherever steps are
    # compared; run_steps compares a group's steps under the group's name)
    group: str = field(default="", compare=False)

    def __post_init__(self):
        # a read-only view of a copy: built steps are shared by every run of
        # the process (built()), so nothing may change one in place
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


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


def export_pipeline_steps(options: ExportOptions | None = None) -> list[Step]:
    """What `addExportPipeline` (export/export_pipeline.cc) runs with
    `options`; without, the part jaxlib's `-sdy-propagation-pipeline` runs
    (default export options, meshes not inlined, and no
    sdy-verify-unreduced-axes: its Shardy predates it). `save-module` steps
    are there only with a dump directory."""
    o = options or ExportOptions(inline_meshes=False)
    verify = options is not None
    dumps = _ModuleDumps(o.dump_directory)
    cleanup = [Step("sdy-sink-data-flow-edges", {"sink-debug-sharding-origins": o.dump_sharding_origins,
                                                 "sink-debug-propagation-edge-sharding": o.dump_propagation_edges})]
    if not o.avoid_export_for_partitioning:
        cleanup += [Step("sdy-remove-sharding-groups"), Step("sdy-sharding-constraint-to-reshard")]
    if o.update_non_divisible_input_output_shardings:
        cleanup += [Step("sdy-update-non-divisible-input-output-shardings"),
                    Step("sdy-remove-sub-axes-in-input-output-shardings")]
    cleanup.append(Step("sdy-close-shardings"))
    steps = [Step("sdy-constant-or-scalar-merger"), *(replace(s, group=EXPORT_CLEANUP) for s in cleanup),
             *dumps.save("after_propagation")]
    if not o.avoid_export_for_partitioning:
        steps += _shardy_partitioner_steps(o, dumps, verify)
    if o.dump_propagation_edges or o.dump_sharding_origins:
        steps.append(Step("sdy-remove-propagation-debug-info"))
    if not o.keep_sharding_rules:
        steps.append(Step("sdy-drop-sharding-rules"))
    if not o.avoid_export_for_partitioning and o.inline_meshes:
        steps.append(Step("sdy-inline-meshes"))
    return steps


def _shardy_partitioner_steps(o: ExportOptions, dumps: _ModuleDumps, verify: bool) -> list[Step]:
    """`runShardyPartitioner` of export_pipeline.cc: the reshards (and, with
    the options, the collectives) of the global program."""
    steps = [Step("sdy-verify-unreduced-axes")] if verify else []
    steps += [Step("sdy-insert-explicit-reshards", {"enable-full-version": o.enable_insert_explicit_collectives
                                                   or o.enable_per_instruction_partitioning})]
    if o.enable_per_instruction_partitioning:
        steps += [*dumps.save("before_per_instruction_partitioning"),
                  Step("sdy-per-instruction-partitioning",
                       {"filter": o.per_instruction_partitioning_filter, "replica-count": o.replica_count,
                        "partition-count": o.partition_count}),
                  *dumps.save("after_per_instruction_partitioning")]
    elif o.enable_insert_explicit_collectives:
        steps += [*dumps.save("after_explicit_reshards"), canonicalize_step(RESHARD_LABEL),
                  Step("sdy-reshard-to-collectives")]
    steps.append(canonicalize_step(COLLECTIVE_LABEL))
    if o.enable_insert_explicit_collectives and o.remove_all_gather_reduce_scatter_for_cmv1:
        steps.append(Step("sdy-remove-all-gather-reduce-scatter-for-cmv1"))
    steps += dumps.save("after_partitioner_with_global_shapes" if o.enable_insert_explicit_collectives
                        else "after_minimal_partitioner_with_global_shapes")
    return steps


def post_propagation_steps(dedup_functions_fully: bool = False) -> list[Step]:
    """What `-sdy-propagation-pipeline` runs after propagating."""
    if dedup_functions_fully:
        steps = [Step("sdy-propagate-to-func-results"), Step("sdy-sink-func-data-flow-edges")]
    else:
        steps = [Step("sdy-export-named-computations"), Step("sdy-propagate-to-func-results")]
    steps += [Step("sdy-unflatten-call-graph", {"dedup-functions-fully": False}), Step(SYMBOL_DCE),
              Step("sdy-insert-func-call-reshards")]
    return steps + export_pipeline_steps()


@lru_cache(maxsize=64)
def built(steps_of, *options) -> tuple[Step, ...]:
    """steps_of(*options), built once per process: the pipelines run the same
    steps on every module (building them costs 1-2% of a small model's run)."""
    return tuple(steps_of(*options))


def load_passes(steps: list[Step]) -> None:
    """Import the passes of `steps`: a pipeline's module does for its default
    steps as it loads, so that its first run imports nothing."""
    for step in steps:
        if step.name != SYMBOL_DCE:
            lookup(step.name).load()


def run_steps(module, ctx, steps: Sequence[Step]) -> None:
    """Run `steps` in order, without verifying in between (the caller verifies
    the result: see the module docstring). The steps share one census of the
    module for as long as their results allow (sdylog/passes/census.py), the
    caller's if it opened one. A group of steps (Step.group) that ran
    before in the scope and left the module as it is now is not run again:
    it would find nothing to do."""
    with shared_census(ctx):
        last_runs = ctx.census.setdefault("groups", {})   # group -> (module, its steps, changes after them)
        for steps_together in _runs(steps):
            group = steps_together[0].group
            if group and last_runs.get(group) == (module, steps_together, changes(ctx)):
                continue
            for step in steps_together:
                follow_step(ctx, _run_step(module, ctx, step))
            if group:
                last_runs[group] = (module, steps_together, changes(ctx))


def _runs(steps: Sequence[Step]) -> list[list[Step]]:
    """The steps in order, the consecutive steps of a group together, every other step alone."""
    runs: list[list[Step]] = []
    for step in steps:
        if step.group and runs and runs[-1][-1].group == step.group:
            runs[-1].append(step)
        else:
            runs.append([step])
    return runs


def _run_step(module, ctx, step: Step):
    """The step's result: what it did to the module (census.py: PRESERVED,
    Invalidated, or None for anything)."""
    if step.name == SYMBOL_DCE:
        with module.context:
            erased = symbol_dce(module, calls=lambda: census(module, ctx).ops("func.call"))
        return PRESERVED if erased == 0 else None
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
    run_steps(module, ctx, built(pre_propagation_steps, _dedup(options)))


def run_export_propagation_steps(module, ctx, options: dict | None = None) -> None:
    """Everything `-sdy-propagation-pipeline` runs after propagation.
    options: {"dedup-functions-fully": bool}."""
    run_steps(module, ctx, built(post_propagation_steps, _dedup(options)))


def run(module, options: dict, ctx):
    """-sdy-import-pipeline."""
    run_steps(module, ctx, built(import_pipeline_steps, _dedup(options)))
    return FOLLOWED


# --- the export pipeline and the partitioner ------------------------------------------
@dataclass(frozen=True)
class ExportOptions:
    """Shardy's ExportOptions (export/passes.h): the options of
    `-sdy-export-pipeline`, by their flag names with `_` for `-`."""
    replica_count: int = 1
    partition_count: int = 1
    dump_directory: str = ""
    avoid_export_for_partitioning: bool = False
    enable_insert_explicit_collectives: bool = False
    remove_all_gather_reduce_scatter_for_cmv1: bool = False
    enable_per_instruction_partitioning: bool = False
    per_instruction_partitioning_filter: str = ""
    keep_sharding_rules: bool = False
    dump_sharding_origins: bool = False
    dump_propagation_edges: bool = False
    avoid_reshards_on_calls: bool = False     # (declared by Shardy, read by no pass)
    update_non_divisible_input_output_shardings: bool = True
    inline_meshes: bool = True

    @classmethod
    def from_flags(cls, options: dict) -> ExportOptions:
        return cls(**{k.replace("-", "_"): v for k, v in options.items()})


@dataclass(frozen=True)
class PartitionerOptions:
    """The options of the partitioner's passes that take them (Shardy's
    executable tests pass the same counts to each)."""
    enable_halo_exchange: bool = True
    replica_count: int = 1
    partition_count: int = 1

    @classmethod
    def from_flags(cls, options: dict) -> PartitionerOptions:
        return cls(**{k.replace("-", "_"): v for k, v in options.items()})

    @property
    def counts(self) -> dict:
        return {"replica-count": self.replica_count, "partition-count": self.partition_count}


def canonicalize_step(label: str) -> Step:
    """The canonicalizer as Shardy's pipelines build it: one label's
    patterns, MLIR's default config (bottom-up)."""
    return Step("canonicalize", {"enable-patterns": (label,), "top-down": False})


def partitioner_steps(o: PartitionerOptions, global_to_local: bool = True) -> list[Step]:
    """From a propagated global program to the per-device program, as
    Shardy's executable partitioner tests run it (partitioning.md 1.2, no
    canonicalizer in between). Without `global_to_local`: the global
    program with every collective explicit and every shape divisible (what
    the per-device program is made from)."""
    steps = [Step("sdy-insert-explicit-reshards", {"enable-full-version": True}),
             Step("sdy-resolve-permutation-factors", {"enable-halo-exchange": o.enable_halo_exchange, **o.counts}),
             Step("sdy-reshard-to-collectives"), Step("sdy-pad-for-divisibility"),
             Step("sdy-resolve-single-device-sharding", o.counts)]
    return steps + global_to_local_steps(o) if global_to_local else steps


def global_to_local_steps(o: PartitionerOptions, drop_shardings: bool = True) -> list[Step]:
    """The partitioner's last steps: the per-device program, without its
    shardings (or with them, for whoever reads them still)."""
    steps = [Step("sdy-convert-global-to-local", o.counts)]
    return steps + [Step("sdy-drop-sharding-and-mesh")] if drop_shardings else steps


def per_instruction_steps(o: PartitionerOptions) -> list[Step]:
    """What `-sdy-per-instruction-partitioning` runs on each op it takes out
    (per_instruction_partitioning.cc's runPartitionerPipeline: permutation
    factors resolved before the reshards are inserted)."""
    return [Step("sdy-resolve-permutation-factors", {"enable-halo-exchange": o.enable_halo_exchange, **o.counts}),
            Step("sdy-insert-explicit-reshards", {"enable-full-version": True}),
            Step("sdy-reshard-to-collectives"), Step("sdy-pad-for-divisibility"), *global_to_local_steps(o)]


class _ModuleDumps:
    """The `save-module` steps of a pipeline: numbered dumps into a folder,
    none without one."""

    def __init__(self, directory: str):
        self.directory = directory
        self.index = 0

    def save(self, name: str) -> list[Step]:
        if not self.directory:
            return []
        self.index += 1
        return [Step("sdy-save-module", {"dump-directory": self.directory, "file-name": name,
                                         "dump-index": self.index - 1})]


def registered_steps(steps: list[Step], ctx) -> list[Step]:
    """The steps whose passes sdylog has. Each other one (a pass still being
    built) is left out, noted in ctx.report["skipped_steps"] and said on
    stderr (once per process): the pipeline runs it as soon as it lands."""
    out = []
    for step in steps:
        if step.name == SYMBOL_DCE or step.name in PASSES:
            out.append(step)
            continue
        skipped = ctx.report.setdefault("skipped_steps", [])
        if step.name not in skipped:
            skipped.append(step.name)
        if step.name not in _WARNED:
            _WARNED.add(step.name)
            print(f"sdylog: warning: -{step.name} is left out (sdylog does not have it yet)", file=sys.stderr)
    return out


_WARNED: set[str] = set()
