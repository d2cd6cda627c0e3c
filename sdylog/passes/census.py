"""Which ops a module holds, by name: one walk shared by the passes of a
pipeline for as long as its ops stay the same.

Most passes of -sdy-propagation-pipeline look for a few kinds of ops (calls,
named or manual computations, sharding groups, data-flow edges, ...) that
most modules do not have; through the bindings, a walk over a large module
costs more than such a pass's whole work. A pass asks `census(module, ctx)`
whether its ops are there (and may take them from it, in walk order) and
returns what it did to the module, one of:

* PRESERVED: it left the module as it was;
* Invalidated(touched): it changed the module; `touched` names the ops it
  created, erased or moved (every one of them, nested ops too), empty when
  it changed attributes only (ATTRIBUTES_ONLY). The census keeps the lists
  of other names and walks again when asked about a touched name or for
  all ops; unless it gave the census the new lists (`relisted`: see
  Invalidated), which it takes instead;
* SHARDINGS_ONLY (Invalidated(frozenset(), shardings_only=True)): it
  changed in place only shardings (`sdy.sharding` and the like), meshes
  and sharding rules (`sdy.sharding_rule`), no other attribute (no
  sym_visibility, callee, manual_axes, group_id, ..., no type). The census
  keeps up as with ATTRIBUTES_ONLY; unlike it, the kept facts follow (they
  read shardings and meshes again). A pass returning ATTRIBUTES_ONLY drops
  the facts: only a pass that checked its changes are of these kinds says
  SHARDINGS_ONLY. (With touched names, shardings_only=True says the same
  of its other changes, and that it told the facts of each op it erased,
  facts/shared.py erasing: ops made or uses rewired cannot be told.)
* None (or Invalidated(None)): it may have done anything; the census is
  walked again when asked.

A pipeline run as one pass (its steps sharing the caller's census, each
reporting what it did) returns FOLLOWED: it changed the module, and the
census has followed every change already.

tests/passes/test_census.py runs the pipelines with a check after every
step that what the census kept agrees with a fresh walk.

The scope also counts the steps that changed the module (`changes`): a
pipeline skips a group of steps that already ran on the module as it is
(pipelines.run_steps).

The census is shared inside `shared_census(ctx)`: a pipeline's steps (see
`pipelines.run_steps`), and the phases of -sdy-propagation-pipeline, whose
propagation changes attributes only. Elsewhere every call walks afresh. The
same scope keeps the module's facts (sdylog/facts/shared.py), which follow
the steps that say SHARDINGS_ONLY (erasing only ops they are told of).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress

from jaxlib.mlir import ir

from sdylog.facts.shared import follow as follow_facts
from sdylog.ir.rewrite import as_operation, op_key
from sdylog.ir.shardings import Meshes
from sdylog.ir.symbols import SymbolTable, callee_of, top_level_op
from sdylog.ir.walk import op_list, op_names

PRESERVED = "preserved"


@dataclass(frozen=True)
class Invalidated:
    """A pass changed the module: it created, erased or moved ops of the
    names `touched` only (empty: attributes only; None: any op), and with
    `shardings_only` changed no attribute but shardings, meshes and
    sharding rules (see the module docstring).

    `relisted` (with `touched`): (top, ops, names) for every top-level op
    whose nested ops changed, with the pre-order list of that op and the ops
    in it as they are now (as Census.within_and_names gives them) -- the
    census' lists with the pass's edits, which a pass that kept them can
    give at less cost than a walk."""
    touched: frozenset | None = None
    shardings_only: bool = False
    relisted: tuple = field(default=(), compare=False)


ATTRIBUTES_ONLY = Invalidated(frozenset())
SHARDINGS_ONLY = Invalidated(frozenset(), shardings_only=True)
FOLLOWED = "followed"


@dataclass
class Census:
    module: ir.Module
    by_name: dict[str, list[ir.Operation]]
    # each top-level op and the ops nested in it, pre-order (a list, not a
    # dict: an Operation's hash changes with its attributes); None when
    # `stale` names make it out of date
    tops: list[list[ir.Operation]] | None
    # the names of `tops`' ops, list for list (read once, by the walk)
    names: list[list[str]] | None = None
    # names whose ops were created, erased or moved since the walk (Invalidated.touched)
    stale: frozenset = frozenset()
    # the calls by top-level op (op_key), while `tops` is None (calls_in)
    _calls_by_top: dict | None = field(default=None, repr=False)

    @staticmethod
    def of(module: ir.Module) -> Census:
        tops: list = []
        names: list = []
        for top in module.body.operations:
            ops = op_list(top)
            tops.append(ops)
            names.append(op_names(ops))
        return Census(module, _group_by_name({"builtin.module": [module.operation]}, tops, names), tops, names)

    def has(self, *names: str) -> bool:
        """The module holds an op with one of these names."""
        self._walk_again_for(names)
        return any(n in self.by_name for n in names)

    def ops(self, name: str) -> list[ir.Operation]:
        """The ops with this name, in walk order (pre-order)."""
        self._walk_again_for((name,))
        return list(self.by_name.get(name, ()))

    def ops_of(self, names) -> list[ir.Operation]:
        """The ops with any of these names, in walk order (pre-order)."""
        self._walk_again_for(names)
        wanted = [n for n in names if n in self.by_name]
        if len(wanted) <= 1:
            return self.ops(wanted[0]) if wanted else []
        return [op for op in self.all_ops() if op.name in wanted]

    def by_names(self) -> dict[str, list[ir.Operation]]:
        """Every op, by name, each name's in walk order."""
        self.all_ops()   # (brings every name's list up to date)
        return {name: list(ops) for name, ops in self.by_name.items()}

    def all_ops(self) -> list[ir.Operation]:
        """Every op, the module first, in walk order (pre-order)."""
        if self.tops is None:
            self._walk_again()
        out = [self.module.operation]
        for ops in self.tops:
            out += ops
        return out

    def all_ops_and_names(self) -> tuple[list[ir.Operation], list[str]]:
        """all_ops() and their names, list for list."""
        ops = self.all_ops()
        names = ["builtin.module"]
        for lst in self.names:
            names += lst
        return ops, names

    def within(self, top) -> list[ir.Operation]:
        """A top-level op (e.g. a function) and the ops nested in it, pre-order."""
        i = self._top_index(top)   # (first: it may walk again, replacing self.tops)
        return list(self.tops[i])

    def within_and_names(self, top) -> tuple[list[ir.Operation], list[str]]:
        """within(top) and their names, list for list."""
        i = self._top_index(top)
        return list(self.tops[i]), list(self.names[i])

    def calls_in(self, func) -> list[ir.Operation]:
        """The `func.call` ops in a top-level function, in walk order. (When
        other names' changes left the pre-order lists out of date, from the
        list of calls, each call's function found through its parents: the
        call-graph passes ask, and need no walk for it.)"""
        if self.tops is None and "func.call" not in self.stale:
            if self._calls_by_top is None:
                self._calls_by_top = _grouped_by_top(self.module, self.by_name.get("func.call", ()))
            return list(self._calls_by_top.get(op_key(func), ()))
        i = self._top_index(func)
        return [op for op, name in zip(self.tops[i], self.names[i]) if name == "func.call"]

    def relisted_without(self, erased: set[int]) -> tuple:
        """Invalidated.relisted for a pass that erased these ops of the
        census' lists (by id: the objects the census handed out), without
        regions, and changed no other op."""
        return self.relisted_edited({}, erased)

    def relisted_edited(self, placed_before: dict[int, list], erased: set[int]) -> tuple:
        """Invalidated.relisted for a pass that placed the new ops
        `placed_before[id(op)]` (without regions) right before ops of the
        census' lists and erased ops of them (as relisted_without's), and
        created, erased or moved no other op."""
        if self.tops is None or not (placed_before or erased):
            return ()
        marks = erased | placed_before.keys()
        out = []
        for ops, names in zip(self.tops, self.names):
            if any(id(op) in marks for op in ops):
                out.append((ops[0], *edited(ops, names, placed_before, erased)))
        return tuple(out)

    def _top_index(self, top) -> int:
        """The position of a top-level op's list in `tops` (walked again if out of date)."""
        if self.tops is None:
            self._walk_again()
        top = as_operation(top)
        return next(i for i, ops in enumerate(self.tops) if ops[0] == top)

    def _walk_again_for(self, names) -> None:
        if self.stale and any(n in self.stale for n in names):
            self._walk_again()

    def _walk_again(self) -> None:
        fresh = Census.of(self.module)
        self.by_name, self.tops, self.names, self.stale = fresh.by_name, fresh.tops, fresh.names, frozenset()
        self._calls_by_top = None

    def follow(self, change: Invalidated) -> None:
        """Keep up with a pass's Invalidated (touched names known)."""
        if not change.touched:
            return
        self._calls_by_top = None
        if change.relisted and self.tops is not None:
            for top, ops, names in change.relisted:
                i = self._top_index(top)
                self.tops[i], self.names[i] = ops, names
            # the touched names' lists again (the others hold the same ops)
            for name in change.touched:
                self.by_name.pop(name, None)
            _group_by_name(self.by_name, self.tops, self.names, change.touched)
            return
        for name in change.touched:
            self.by_name.pop(name, None)
        self.stale |= change.touched
        self.tops = self.names = None


def _grouped_by_top(module: ir.Module, ops) -> dict[int, list]:
    """The ops (walk order) by the top-level op each is nested in (op_key),
    each group in walk order."""
    groups: dict[int, list] = {}
    for op in ops:
        groups.setdefault(op_key(top_level_op(module, op)), []).append(op)
    return groups


def edited(ops: list, names: list, placed_before: dict[int, list], erased: set[int]) -> tuple[list, list]:
    """A pre-order list of ops and their names, list for list, with the ops
    `placed_before[id(op)]` (without regions) inserted before `op` and the
    ops whose ids are in `erased` (without regions) left out."""
    if not placed_before:   # (erasing many: one pass, no slices)
        kept = [id(op) not in erased for op in ops]
        return list(compress(ops, kept)), list(compress(names, kept))
    marks = erased | placed_before.keys()
    new_ops, new_names, start = [], [], 0
    for i in [i for i, op in enumerate(ops) if id(op) in marks]:
        new_ops += ops[start:i]
        new_names += names[start:i]
        placed = placed_before.get(id(ops[i]))
        if placed:
            new_ops += placed
            new_names += op_names(placed)
        start = i + 1 if id(ops[i]) in erased else i
    return new_ops + ops[start:], new_names + names[start:]


def _group_by_name(by_name: dict[str, list], tops: list, names: list, only=None) -> dict[str, list]:
    """Add the ops of `tops` (names: theirs, list for list) to their names'
    lists in `by_name`, in walk order (`only`: those of these names)."""
    for ops, ns in zip(tops, names):
        for i in range(len(ns)) if only is None else [i for i, n in enumerate(ns) if n in only]:
            lst = by_name.get(ns[i])
            if lst is None:
                by_name[ns[i]] = [ops[i]]
            else:
                lst.append(ops[i])
    return by_name


def rewrite_each(module: ir.Module, ctx, name: str, rewrite, change: Invalidated | None = None):
    """REWRITE every op named NAME (walk order), in the module's context: a pass
    that only rewrites such ops one by one. PRESERVED when there is none;
    else None (it may have done anything), or, given the `change` a rewrite
    makes (it then returns whether it changed the op), `change` if one did
    and PRESERVED if none did."""
    ops = census(module, ctx).ops(name)
    if not ops:
        return PRESERVED
    with module.context:
        changed = [rewrite(op) for op in ops]
    if change is not None:
        return change if any(changed) else PRESERVED


def rewrite_each_call(module: ir.Module, ctx, rewrite, change: Invalidated | None = None):
    """REWRITE(call, callee, meshes) for every `func.call` (walk order); the
    callee is looked up only when REWRITE asks for it (`callee()`), an error
    at the call if there is none. PRESERVED when the module has no call;
    `change`: as rewrite_each's."""
    symbols = meshes = None

    def rewrite_call(call):
        nonlocal symbols, meshes
        if symbols is None:   # only for a module with calls
            symbols, meshes = SymbolTable(module), Meshes(module)
        return rewrite(call, lambda: callee_of(symbols, call, ctx.filename), meshes)
    return rewrite_each(module, ctx, "func.call", rewrite_call, change)


def census(module: ir.Module, ctx=None) -> Census:
    """The module's census: the pipeline's shared one when it is current, else a fresh walk."""
    shared = getattr(ctx, "census", None)
    if shared is None:
        return Census.of(module)
    current = shared.get("census")
    if current is None or current.module is not module:
        current = shared["census"] = Census.of(module)
    return current


@contextmanager
def shared_census(ctx):
    """Let everything run inside share one census (through `census(module,
    ctx)`, each step reporting its changes to `follow_step`); inside an open
    scope, the outer one is shared."""
    if ctx.census is not None:
        yield
        return
    ctx.census = {}
    try:
        yield
    finally:
        ctx.census = None


def follow_step(ctx, result) -> None:
    """After a step: keep the shared census, if one is open, as far as the
    step's result allows (see the module docstring); the facts kept in the
    scope follow the step or go (sdylog/facts/shared.py)."""
    shared = getattr(ctx, "census", None)
    if result == PRESERVED or result == FOLLOWED or shared is None:
        return
    shared["changes"] = changes(ctx) + 1
    follow_facts(shared, result)
    current = shared.get("census")
    if isinstance(result, Invalidated) and result.touched is not None and current is not None:
        current.follow(result)
    else:
        shared.pop("census", None)


def changes(ctx) -> int:
    """How many steps changed the module in ctx's scope so far (a FOLLOWED
    pipeline counts its own steps; 0 outside a scope)."""
    shared = getattr(ctx, "census", None)
    return 0 if shared is None else shared.get("changes", 0)
