"""-sdy-propagation-pipeline: the import passes, user-priority propagation
(aggressive, op priorities on, sharding rules kept until export), the export
passes (sdylog/passes/pipelines.py has the sequences).

The three phases are separate functions so that `sdylog run` can time them
and read the derived relations between propagation and export, and `sdylog
explain` can stop before export, all running exactly what `sdylog opt` runs
(in one `shared_census`: the walk of the module's ops made for the import
serves propagation and export too)."""
from __future__ import annotations

from sdylog.passes import lookup
from sdylog.passes.census import FOLLOWED, shared_census
from sdylog.passes.pipelines import (load_passes, post_propagation_steps, pre_propagation_steps,
                                     run_export_propagation_steps, run_import_pipeline)
from sdylog.propagation.passes import run_propagation


# How the pipeline propagates (`sdylog facts` writes the same run configuration).
PIPELINE_PROPAGATION = {"strategies": ("aggressive",), "op_priorities": True, "user_priorities": True}

load_passes(pre_propagation_steps() + post_propagation_steps())


def _steps(options: dict) -> dict:
    return {"dedup-functions-fully": bool(options.get("dedup-functions-fully", False))}


def import_phase(module, ctx, options: dict | None = None) -> None:
    run_import_pipeline(module, ctx, _steps(options or {}))


def propagation_phase(module, ctx, before_erasing=None, keep_dead: bool = False):
    """User priorities, op priorities, the aggressive strategy; returns the
    PropagationResult (engine with every derived relation, facts).
    `before_erasing(result)`: called before the dead ops are erased, while
    the facts' handles on every op are good; `keep_dead`: they are not
    erased (run_propagation).

    Shardy keeps the sharding rules here for its export's
    sdy-insert-explicit-reshards; sdy-drop-sharding-rules removes them (all
    but custom ones, which populating leaves alone) at the end of export,
    and no other step reads them. They are not attached here: the reshard
    step builds the same rules from the registry (an op's own rule wins
    there too), and the output is the same, without a walk, a rule
    attribute per op, a verification, and their parsing by the reshard
    step's facts."""
    options = {**lookup("sdy-user-priority-propagate").options, "keep-sharding-rules": False}
    return run_propagation(module, options, ctx, **PIPELINE_PROPAGATION, before_erasing=before_erasing,
                           keep_dead=keep_dead)


def export_phase(module, ctx, options: dict | None = None) -> None:
    run_export_propagation_steps(module, ctx, _steps(options or {}))


def run(module, options: dict, ctx):
    """The whole pipeline as one pass (`sdylog run` and `query` run the
    phases themselves, to read the derived relations between them)."""
    with shared_census(ctx):   # (the phases' callers elsewhere share it too)
        import_phase(module, ctx, options)
        propagation_phase(module, ctx)
        export_phase(module, ctx, options)
    return FOLLOWED
