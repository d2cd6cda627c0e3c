"""-sdy-basic-propagate: one run of the basic factor strategy, every direction
allowed (sdylog/propagation, rules/propagation.dl)."""
from __future__ import annotations

from sdylog.propagation.passes import run_propagation


def run(module, options: dict, ctx) -> None:
    run_propagation(module, options, ctx, strategies=("basic",), op_priorities=False, user_priorities=False)
