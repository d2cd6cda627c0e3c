"""The partitioned program of a module, end to end: from a JAX export (or a
propagated module) through propagation (-sdy-propagation-pipeline), the
partitioner's passes up to the global program whose every collective is
explicit and every shape divisible, its collectives costed by
rules/collectives.dl, then the per-device program
(-sdy-convert-global-to-local). `sdylog run --partition` and `sdylog
simulate` run it; the sequences are sdylog/passes/pipelines.py's.

A module that already holds sdy collectives (and no reshard or sharding
constraint left) is explicit: it is taken as written, not propagated and
given no reshards again (which would reduce twice what its collectives
reduced), only given what Shardy's partitioner still runs after the
reshards are written (`explicit_steps`: what Shardy's own
`-sdy-reshard-to-collectives` output, or sdylog's, lacks for the
per-device program: windows sharded along a permutation factor resolved,
non-divisible shardings padded, single-device ops placed) and made local.
Each of those steps leaves a module that needs nothing of it as it is.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from sdylog.ir.module import verify_module
from sdylog.ir.shardings import COLLECTIVE_OPS
from sdylog.ir.walk import walk_ops
from sdylog.passes.census import changes, shared_census
from sdylog.passes.pipelines import (PartitionerOptions, global_to_local_steps, partitioner_steps,
                                     registered_steps, run_steps)

# Ops that say a global program still has reshards to decide.
_IMPLICIT = {"sdy.reshard", "sdy.sharding_constraint"}


@dataclass
class Partitioned:
    """What partitioning a module found: its collectives (kind, axes,
    location, bytes one device sends), the propagation result (None for an
    explicit module) and the seconds of each phase."""
    explicit: bool
    collectives: list[dict] = field(default_factory=list)
    completed_by: list[str] = field(default_factory=list)   # the explicit_steps that changed an explicit module
    propagation: object | None = None
    seconds: dict = field(default_factory=dict)

    @property
    def bytes_per_device(self) -> int:
        return sum(c["bytes_per_device"] for c in self.collectives)


def is_explicit(module) -> bool:
    """The module holds sdy collectives and no reshard or sharding
    constraint: its partitioning is written out already."""
    names = {op.name for op in walk_ops(module.operation)}
    return bool(names & COLLECTIVE_OPS) and not names & _IMPLICIT


def explicit_steps(options: PartitionerOptions):
    """What an explicit module still needs of the partitioner
    (partitioner_steps, in Shardy's order): all but the reshards'
    insertion, which it holds already as collectives. (A window
    resolved without halos becomes reshards: -sdy-reshard-to-collectives
    writes them as collectives.)"""
    return [s for s in partitioner_steps(options, global_to_local=False) if s.name != "sdy-insert-explicit-reshards"]


def partition_module(module, ctx, options: PartitionerOptions = PartitionerOptions(),
                     global_to_local: bool = True, drop_shardings: bool = True,
                     explicit: bool | None = None, propagated: bool = False, phase=None) -> Partitioned:
    """Partition `module` in place (see the module docstring). `explicit`:
    whether to take it as written (None: `is_explicit`); `propagated`: the
    caller ran the propagation pipeline already. Without
    `global_to_local` the module is left as the explicit global program;
    `drop_shardings=False` keeps the shardings on the per-device program.
    `phase(name, fn, *args)` runs each phase (for timing; default: a
    timer into Partitioned.seconds)."""
    from sdylog.partition.collective_costs import module_collectives
    from sdylog.passes.propagation_pipeline import export_phase, import_phase, propagation_phase

    explicit = is_explicit(module) if explicit is None else explicit
    out = Partitioned(explicit)
    phase = phase or _timer(out.seconds)
    with module.context:
        if not explicit:
            with shared_census(ctx):
                if not propagated:
                    phase("import", import_phase, module, ctx)
                    out.propagation = phase("propagation", propagation_phase, module, ctx)
                    phase("export", export_phase, module, ctx)
                steps = registered_steps(partitioner_steps(options, global_to_local=False), ctx)
                phase("partition", run_steps, module, ctx, steps)
        else:
            out.completed_by = phase("partition", _complete, module, ctx, options)
        verify_module(module, ctx.filename)
        out.collectives = phase("collectives", module_collectives, module, ctx.filename)
        if global_to_local:
            phase("global-to-local", run_steps, module, ctx, global_to_local_steps(options, drop_shardings))
    return out


def _complete(module, ctx, options: PartitionerOptions) -> list[str]:
    """Run explicit_steps on an explicit module; the names of those that
    changed it, said in a note (the module is not quite as written)."""
    changed = []
    with shared_census(ctx):
        for step in registered_steps(explicit_steps(options), ctx):
            before = changes(ctx)
            run_steps(module, ctx, [step])
            if changes(ctx) != before:   # (a step that found nothing to do says so: census.PRESERVED)
                changed.append(step.name)
    if changed:
        from sdylog.ir.rewrite import emit_note
        emit_note(module.operation, "the module holds its collectives: taken as written, not propagated, but "
                  + ", ".join(f"-{n}" for n in changed) + " still changed it (as Shardy's partitioner "
                  "runs after the reshards are written)", ctx.filename)
    return changed


def _timer(seconds: dict):
    def phase(name, fn, *args):
        t = time.perf_counter()
        result = fn(*args)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t
        return result
    return phase


def collectives_table(collectives: list[dict]) -> list[str]:
    """One line per collective (where, kind, axes, bytes one device sends)
    and the total, for reports."""
    total = sum(c["bytes_per_device"] for c in collectives)
    lines = [f"collectives: {len(collectives)}, bytes per device (ring model): {total}"]
    for c in collectives:
        where = f"{c['location']}: " if c["location"] else ""
        lines.append(f"  {where}{c['kind']} {c['axes']}: {c['bytes_per_device']} bytes")
    return lines

