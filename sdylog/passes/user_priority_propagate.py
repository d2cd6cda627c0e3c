"""-sdy-user-priority-propagate: op-priority propagation in rounds, one per
user priority (p0, then each distinct higher priority in increasing order)."""
from __future__ import annotations

from sdylog.propagation.passes import run_propagation, strategies_of


def run(module, options: dict, ctx) -> None:
    run_propagation(module, options, ctx, strategies=strategies_of(options),
                    op_priorities=bool(options.get("run-op-priority-propagation", True)), user_priorities=True)
