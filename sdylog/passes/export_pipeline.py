"""-sdy-export-pipeline: what Shardy runs after propagation to hand the
module to a partitioner (export/export_pipeline.cc): constants merged back,
data-flow edges sunk, sharding constraints turned into reshards, input and
output shardings made divisible, shardings closed; then, unless
`avoid-export-for-partitioning`, the partitioner's global part (reshards;
with `enable-insert-explicit-collectives` the collectives they become, or
with `enable-per-instruction-partitioning` per-device code for the ops the
filter selects), the collective canonicalization, and meshes inlined.

The sequence is pipelines.export_pipeline_steps (the propagation pipeline
runs part of it). Passes sdylog does not have yet are left out, with a
warning (pipelines.registered_steps).
"""
from __future__ import annotations

from sdylog.passes.census import FOLLOWED, shared_census
from sdylog.passes.pipelines import ExportOptions, built, export_pipeline_steps, registered_steps, run_steps


def run(module, options: dict, ctx):
    steps = built(export_pipeline_steps, ExportOptions.from_flags(options))
    with shared_census(ctx):
        run_steps(module, ctx, registered_steps(steps, ctx))
    return FOLLOWED
