"""-sdy-propagation-pipeline: the import passes, user-priority propagation
(aggressive, op priorities on, sharding rules kept until export), the export
passes (sdylog/passes/pipelines.py has the sequences)."""
from __future__ import annotations

from sdylog.passes import lookup
from sdylog.passes.pipelines import run_export_propagation_steps, run_import_pipeline
from sdylog.propagation.passes import run_propagation


def run(module, options: dict, ctx) -> None:
    steps = {"dedup-functions-fully": bool(options.get("dedup-functions-fully", False))}
    run_import_pipeline(module, ctx, steps)
    options = {**lookup("sdy-user-priority-propagate").options, "keep-sharding-rules": True}
    result = run_propagation(module, options, ctx,
                             strategies=("aggressive",), op_priorities=True, user_priorities=True)
    run_export_propagation_steps(module, ctx, steps)
    return result  # `sdylog run` / `query` read the derived relations from it
