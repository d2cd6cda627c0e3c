"""-sdy-verify-unreduced-axes: diagnostics only. The rules
(rules/verify_unreduced_axes.dl) find the ops whose unreduced axes change
in a way only a blessed op may make; the first one in Shardy's walk order
is an error at that op. The module is not changed."""
from __future__ import annotations

from sdylog import RULES_DIR
from sdylog.facts.shared import module_facts
from sdylog.passes.census import PRESERVED, census
from sdylog.reshard.driver import evaluate, first_error

# Collectives that must have a sharded operand (the one violation that needs no unreduced axes).
_REDUCING_COLLECTIVES = ("sdy.all_reduce", "sdy.reduce_scatter")


def verify_program():
    from sdylog.datalog.cache import rule_program
    return rule_program(str(RULES_DIR / "verify_unreduced_axes.dl"))


def run(module, options: dict, ctx):
    if not _may_violate(module, ctx):
        return PRESERVED
    decisions = evaluate(verify_program(), module, ctx, lambda facts: {}, ["unreduced_violation"], strict_rules=False)
    first_error(decisions, decisions.engine.select("unreduced_violation", "o", "order", "message"), ctx)
    return PRESERVED


def _may_violate(module, ctx) -> bool:
    """Whether the rules may find a violation: all but one need a sharding
    with unreduced axes (a sharding_unreduced row of the module's facts,
    which the rules read and the reshard step after this pass reads too);
    that one needs an sdy.all_reduce or sdy.reduce_scatter. Most modules
    have neither (jax exports have no unreduced axes): no evaluation."""
    if census(module, ctx).has(*_REDUCING_COLLECTIVES):
        return True
    with module.context:
        return bool(module_facts(module, ctx).rows("sharding_unreduced"))
