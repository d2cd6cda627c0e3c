"""What the five propagation passes share: their options and one run."""
from __future__ import annotations

from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.census import SHARDINGS_ONLY, follow_step
from sdylog.passes.sharding_group_sync import open_conflicting_groups
from sdylog.propagation.driver import PropagationOptions, propagate
from sdylog.propagation.writeback import erase_dead_ops

_STRATEGIES = {"aggressive": ("aggressive",), "basic": ("basic",),
               "basic-then-aggressive": ("basic", "aggressive")}


def strategies_of(options: dict) -> tuple[str, ...]:
    name = options.get("propagation-strategy", "aggressive")
    if name not in _STRATEGIES:
        raise SdylogError(f"unknown propagation strategy '{name}' (choose from {', '.join(_STRATEGIES)})")
    return _STRATEGIES[name]


def run_propagation(module, options: dict, ctx, *, strategies: tuple[str, ...], op_priorities: bool,
                    user_priorities: bool, before_erasing=None, keep_dead: bool = False):
    """One propagation pass: sharding groups whose members start apart get
    open constraints (sharding_group_sync), the rules' run, then Shardy's
    clean-up of sharding rules (kept on every op with `keep-sharding-rules`,
    else none added); the dead code Shardy's driver erased is gone.
    `before_erasing(result)` is called before the dead ops are erased: the
    handles result.facts holds on them (and on their results) die with them,
    so a caller reads them there (`sdylog run` locates its conflicts).
    `keep_dead`: they are not erased (a run only explained, whose facts go
    on naming them: `sdylog explain`'s API)."""
    opts = PropagationOptions(strategies=strategies, op_priorities=op_priorities,
                              user_priorities=user_priorities,
                              conservative=bool(options.get("conservative-propagation", False)),
                              keep_sharding_rules=bool(options.get("keep-sharding-rules", False)))
    follow_step(ctx, open_conflicting_groups(module, ctx))
    result = propagate(module, opts, ctx)
    follow_step(ctx, SHARDINGS_ONLY)   # the write-back sets shardings only
    if opts.keep_sharding_rules:
        # -sdy-populate-op-sharding-rules, reusing the rules the facts hold
        # (write-back changed only shardings, which no rule depends on).
        from sdylog.passes.populate_op_sharding_rules import populate_rules
        facts = result.facts
        known = {facts.ops[op]: facts.rules[rule] for op, rule in facts.rows("op_rule")}
        populate_rules(module, opts.conservative, getattr(ctx, "filename", "-"), known)
        follow_step(ctx, SHARDINGS_ONLY)
    if before_erasing is not None:
        before_erasing(result)
    if keep_dead:
        return result
    with module.context:
        if erase_dead_ops(result.engine, result.facts):   # (rare: the census walks again)
            follow_step(ctx, None)
    return result
