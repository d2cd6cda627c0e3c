"""-sdy-aggressive-propagate: one run of the aggressive factor strategy (or of
`propagation-strategy`), every direction allowed."""
from __future__ import annotations

from sdylog.propagation.passes import run_propagation, strategies_of


def run(module, options: dict, ctx) -> None:
    run_propagation(module, options, ctx, strategies=strategies_of(options), op_priorities=False,
                    user_priorities=False)
