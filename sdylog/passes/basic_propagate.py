"""-sdy-basic-propagate: one run of the basic factor strategy, every direction
allowed (sdylog/propagation, rules/propagation.dl)."""
from __future__ import annotations

from sdylog.passes.sharding_group_sync import open_conflicting_groups
from sdylog.propagation.passes import run_propagation


def run(module, options: dict, ctx) -> None:
    open_conflicting_groups(module, ctx)
    run_propagation(module, options, ctx, strategies=("basic",), op_priorities=False, user_priorities=False)
