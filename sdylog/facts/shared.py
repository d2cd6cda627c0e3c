"""Facts once per module: the steps of a pipeline reuse the facts of the
module for as long as it stays as it was.

-sdy-propagation-pipeline's own reshard step, the full
-sdy-insert-explicit-reshards after it, and the export pipeline's passes
that read facts all extract them from a module the steps in between mostly
leave alone (on a transformer, no reshard is inserted and nothing else
changes). The facts are kept in the pipeline's census scope
(sdylog/passes/census.py) and dropped by `follow_step` after any step that
does not return PRESERVED; outside a scope, every call extracts afresh.
Whoever reads facts from here must not change them (FactSet's
add_replicated_sharding is the one addition, and it adds each sharding once).
"""
from __future__ import annotations

from sdylog.facts.extract import FactSet, extract_facts
from sdylog.oprules import RuleCache


def module_facts(module, ctx, *, conservative: bool = False, static_shapes: bool = False,
                 strict_rules: bool = False) -> FactSet:
    """The facts of `module` (extract_facts with these options): those kept
    in ctx's census scope when the module has not changed since they were
    extracted with the same options, else extracted (reading the census'
    op lists instead of walking) and kept."""
    filename = getattr(ctx, "filename", "-")
    scope = getattr(ctx, "census", None)
    if scope is None:
        return extract_facts(module, filename, conservative=conservative, static_shapes=static_shapes,
                             strict_rules=strict_rules)
    key = (module, conservative, static_shapes, strict_rules)
    kept = scope.get("facts")
    if kept is not None and kept[0] == key:
        return kept[1]
    from sdylog.passes.census import census
    facts = extract_facts(module, filename, conservative=conservative, static_shapes=static_shapes,
                          strict_rules=strict_rules, names_within=census(module, ctx).within_and_names,
                          rules=_rule_cache(module, scope, conservative))
    scope["facts"] = (key, facts)
    return facts


def _rule_cache(module, scope: dict, conservative: bool) -> RuleCache:
    """The op sharding rules built for the module's ops in this scope, by
    rule_key: a rule depends on the op's name, types and attributes only,
    which passes do not change in place (ops they make have keys of their
    own), so the reshard step reuses those propagation built."""
    kept = scope.get(("rules", conservative))
    if kept is None or kept[0] is not module:
        kept = scope[("rules", conservative)] = (module, RuleCache(conservative))
    return kept[1]
