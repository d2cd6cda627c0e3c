"""-sdy-insert-explicit-reshards: make every op's shardings work, with
`sdy.reshard` on operands and results and `sdy.all_reduce` after ops whose
reduction factors are sharded. The reshard rules (rules/reshard.dl) decide;
sdylog/reshard/writer.py writes. `enable-full-version` is Shardy's option
(off: only what Shardy's export does without the partitioner).

An op the rules find left without a per-device program (no common mesh,
rules/reshard/errors.dl) is not an error here: the module stays a valid
global program. Its error waits in ctx.no_common_mesh_hand_over (each
run replaces it; sdylog/reshard/driver.py, hand_over) for
-sdy-convert-global-to-local, which reports it."""
from __future__ import annotations

from sdylog.passes.census import PRESERVED
from sdylog.reshard.driver import KEPT, ReshardOptions, decide, hand_over, no_common_mesh_error
from sdylog.reshard.writer import write_reshards


def run(module, options: dict, ctx):
    full_version = bool(options.get("enable-full-version", False))
    decisions = decide(module, ReshardOptions(full_version=full_version), ctx)
    error = no_common_mesh_error(decisions, getattr(ctx, "filename", "-"))
    with module.context:
        counts = write_reshards(module, decisions.engine, decisions.facts)
    if ctx is not None:
        hand_over(ctx, module, error, counts.wrote, full_version)
    if ctx is not None and hasattr(ctx, "report"):
        ctx.report.setdefault("reshards", []).append({**decisions.timings, "reshards": counts.reshards,
                                                       "all_reduces": counts.all_reduces})
    if counts.wrote and getattr(ctx, "census", None) is not None:
        ctx.census.pop(KEPT, None)   # (made on facts the module no longer has: never reused)
    return None if counts.wrote else PRESERVED
