"""-sdy-verify-unreduced-axes: diagnostics only. The rules
(rules/verify_unreduced_axes.dl) find the ops whose unreduced axes change
in a way only a blessed op may make; the first one in Shardy's walk order
is an error at that op. The module is not changed."""
from __future__ import annotations

from functools import lru_cache

from sdylog import RULES_DIR
from sdylog.passes.census import UNCHANGED
from sdylog.reshard.driver import evaluate, first_error


@lru_cache(maxsize=1)
def verify_program():
    from sdylog.datalog import load_program
    from sdylog.datalog.cache import load_program_cached
    return load_program_cached(str(RULES_DIR / "verify_unreduced_axes.dl"), load_program)


def run(module, options: dict, ctx):
    decisions = evaluate(verify_program(), module, ctx, lambda facts: {}, ["unreduced_violation"], strict_rules=False)
    first_error(decisions, "unreduced_violation", ctx)
    return UNCHANGED
