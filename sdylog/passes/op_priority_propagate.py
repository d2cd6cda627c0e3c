"""-sdy-op-priority-propagate: five aggressive runs, each allowing the directions
of one more op-priority step (pass-through single use, multi use, pass-through
factors, all but broadcast forward, all)."""
from __future__ import annotations

from sdylog.propagation.passes import run_propagation, strategies_of


def run(module, options: dict, ctx) -> None:
    run_propagation(module, options, ctx, strategies=strategies_of(options),
                    op_priorities=bool(options.get("run-op-priority-propagation", True)), user_priorities=False)
