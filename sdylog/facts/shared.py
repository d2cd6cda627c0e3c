"""Facts once per module: the steps of a pipeline reuse the facts of the
module, which follow the steps that change it in the ways they can.

Propagation, -sdy-propagation-pipeline's own reshard step, the full
-sdy-insert-explicit-reshards after it, and the export pipeline's passes
that read facts all read the facts of one module, which the steps in
between change little: propagation and most export steps change shardings
only, and the constant merger and sink-data-flow-edges erase ops (copies
of constants the splitter made, data-flow edges), telling the facts. The
facts are kept in the pipeline's census scope (sdylog/passes/census.py);
after each step that changed the module (`follow`, from
census.follow_step) they are:

* kept, their sharding rows (extract.SHARDING_RELATIONS) to be read again,
  after a step that says it changed shardings, meshes and sharding rules
  only (census.SHARDINGS_ONLY; facts with rules read from ops' attributes
  are dropped instead);
* the same, without the erased ops, after such a step that also erased
  ops, having told the facts of each one before it went (`erasing`; the
  names it touched are those it told of);
* dropped after any other change, plain census.ATTRIBUTES_ONLY among them
  (some other attribute the facts read may have changed): the next step
  extracts them afresh.

Outside a scope, every call extracts afresh. Whoever reads facts from here
must not change them (FactSet's add_replicated_sharding is the one
addition, and it adds each sharding once).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sdylog.facts.extract import FactSet, extract_facts, read_shardings
from sdylog.facts.follow import without_erased
from sdylog.oprules import RuleCache


@dataclass
class _Kept:
    """Facts kept in a census scope, with what the steps since did."""
    module: object
    conservative: bool
    static_shapes: bool
    strict_rules: bool
    facts: FactSet
    stale: bool = False   # shardings may have changed since they were read
    erased: dict = field(default_factory=dict)   # op id -> {result value id: its replacement's}
    told: set = field(default_factory=set)       # the names of the ops erased in the current step

    def serves(self, module, conservative: bool, static_shapes: bool, strict_rules: bool) -> bool:
        """The facts are those an extraction with these options gives (the
        checks of static_shapes and strict_rules passed or not needed)."""
        return (module is self.module and conservative == self.conservative
                and (self.static_shapes or not static_shapes)
                and (self.strict_rules or not strict_rules or not self.facts.unknown_ops))

    def current(self, filename: str) -> FactSet:
        """The facts, after the erasures and sharding changes since."""
        if self.erased:
            self.facts = without_erased(self.facts, self.erased)
            self.erased = {}
        if self.stale:
            self.facts = read_shardings(self.module, self.facts, filename)
            self.stale = False
        return self.facts


def module_facts(module, ctx, *, conservative: bool = False, static_shapes: bool = False,
                 strict_rules: bool = False) -> FactSet:
    """The facts of `module` (extract_facts with these options): those kept
    in ctx's census scope when they serve (followed to the module as it is),
    else extracted (reading the census' op lists instead of walking) and kept."""
    filename = getattr(ctx, "filename", "-")
    scope = getattr(ctx, "census", None)
    kept = None if scope is None else scope.get("facts")
    if kept is not None and kept.serves(module, conservative, static_shapes, strict_rules):
        return kept.current(filename)
    names_within = None
    if scope is not None:
        from sdylog.passes.census import census
        names_within = census(module, ctx).within_and_names
    facts = extract_facts(module, filename, conservative=conservative, static_shapes=static_shapes,
                          strict_rules=strict_rules, names_within=names_within,
                          rules=_rule_cache(module, conservative))
    if scope is not None:
        scope["facts"] = _Kept(module, conservative, static_shapes, strict_rules, facts)
    return facts


def erasing(ctx, op, replacement) -> None:
    """Tell the facts kept in ctx's scope, if any, that `op` (of one result;
    the ops nested in it go with it) is about to be erased, its result's
    uses replaced by the value `replacement`. Call before erasing it. A
    step that tells of an erasure tells of every change it makes to ops of
    that name."""
    scope = getattr(ctx, "census", None)
    kept = None if scope is None else scope.get("facts")
    if kept is None:
        return
    kept.told.add(op.name)
    facts = kept.facts
    result, new = facts.value_ids.get(op.result), facts.value_ids.get(replacement)
    o = -1 if result is None else facts.value_ops[result]
    if new is None or o < 0:
        scope.pop("facts")   # (an op or a value the facts do not know: they cannot follow)
        return
    kept.erased[o] = {result: new}


def follow(scope: dict, change) -> None:
    """After a step that changed the module (census.follow_step: `change`
    is its Invalidated, or None for anything): keep the scope's facts or
    drop them (see the module docstring)."""
    kept = scope.get("facts")
    if kept is None:
        return
    told, kept.told = kept.told, set()
    touched = getattr(change, "touched", None)   # (None: any op may have been made or erased)
    if (getattr(change, "shardings_only", False) and touched is not None and touched <= told
            and not kept.facts.rules_from_attributes):
        kept.stale = True
    else:
        scope.pop("facts")


def _rule_cache(module, conservative: bool) -> RuleCache:
    """The op sharding rules built for ops in the module's MLIR context, by
    rule_key: a rule depends on the op's name, types and attributes only
    (uniqued per context; a key holds them, and so keeps the context
    alive), which passes do not change in place (ops they make have keys of
    their own). So the reshard step reuses the rules propagation built, and
    a run those of earlier runs and modules (a transformer's ~70 rules
    cost a tenth of its fact extraction). Kept for the last few contexts,
    each made anew when it holds _RULES_KEPT rules."""
    key = (module.context, conservative)
    rules = _RULES.get(key)
    if rules is None or rules.count() >= _RULES_KEPT:
        if len(_RULES) >= 4:
            _RULES.clear()
        rules = _RULES[key] = RuleCache(conservative)
    return rules


_RULES: dict = {}           # (context, conservative) -> RuleCache
_RULES_KEPT = 10_000
