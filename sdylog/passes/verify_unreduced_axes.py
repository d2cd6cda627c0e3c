"""-sdy-verify-unreduced-axes: diagnostics only. The rules
(rules/verify_unreduced_axes.dl) find the ops whose unreduced axes change
in a way only a blessed op may make; the first one in Shardy's walk order
is an error at that op. The module is not changed."""
from __future__ import annotations


from sdylog import RULES_DIR
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
    with unreduced axes, which prints `unreduced={...}`; that one needs an
    sdy.all_reduce or sdy.reduce_scatter. A module without either (most
    modules: jax exports have no unreduced axes) needs no facts and no
    evaluation. Shardings are in an op's `sdy.sharding`, or in other
    attributes of sdy ops and functions (all of whose attributes are read);
    one look per distinct attribute."""
    looks = census(module, ctx)
    if looks.has(*_REDUCING_COLLECTIVES):
        return True
    seen: dict = {}

    def unreduced(attr) -> bool:
        found = seen.get(attr)
        if found is None:
            found = seen[attr] = "unreduced" in str(attr)
        return found

    for op, name in zip(*looks.all_ops_and_names()):
        attrs = op.attributes
        if name.startswith("sdy.") or name == "func.func":
            if any(unreduced(attrs[i].attr) for i in range(len(attrs))):
                return True
        elif "sdy.sharding" in attrs and unreduced(attrs["sdy.sharding"]):
            return True
    return False
