"""The plan of a clause body, and the one planner that makes it.

Both evaluators run plans: the Python one as generated source (pyeval.py),
the C one as instruction words (native_plan.py, native/interp.h). A plan is
a list of steps over numbered registers (the clause's variables and
temporaries) and tuple slots (one per loop):

    Scan t rel             loop: t = each tuple of rel
    Lookup t rel key vals  loop: t = each tuple of rel whose columns `key` hold vals
    Bind r t c             r = t[c]
    Check t c v            next solution unless t[c] == v
    Assign r v             r = v
    Test op a b            next solution unless a op b (= != < <= > >=, match, contains)
    Either options         next solution unless every Test of some option holds
    Branch options         loop: each option whose Tests hold, its Assigns made
    Absent rel key vals    next solution if rel has a tuple with vals in columns `key`
    Distinct t             next solution if t is the tuple being tested
    Fail                   next solution
    Aggregate r op ...     r = op over the solutions of its own steps
    Emit rel clause vals   a head tuple; Holds: the domination test holds

Values are Reg(n), Const(value) (a str is a symbol: the C backend interns
it when it binds the plan to a database, never in the plan) or Call(op,
args). A plan that reads a delta tuple (semi-naive, rank-ordered, a
domination test) finds its columns in registers 0..arity-1.

The planner (greedy, as before): the delta atom first; then every filter
as soon as its variables are bound; then the atom with the most bound
arguments, looked up through an index on them (fewer columns when an index
that serves other lookups is selective enough, `index_key`); live
relations (those of the stratum, which grow) last, but for a membership
probe of one (every argument bound), which goes first.
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, replace

from sdylog.datalog.ast import (Aggregate as AggregateExpr, AnyOf, Atom, BoolLit, Comparison, Functor, Negation,
                                NumberLit, StringLit, Var, Wildcard, variables)
from sdylog.datalog.semantics import injected, literal_exprs


# ---------------------------------------------------------------- values
@dataclass(frozen=True)
class Reg:
    n: int


@dataclass(frozen=True)
class Const:
    value: object   # int, float, or str (a symbol)


@dataclass(frozen=True)
class Call:
    op: str
    args: tuple


# ---------------------------------------------------------------- steps
# (named tuples: small, and quick to make and to unpickle; a step is told by
# its type, never by comparing it with another)
Scan = namedtuple("Scan", "t relation")
Lookup = namedtuple("Lookup", "t relation key values")
Bind = namedtuple("Bind", "reg t col")
Check = namedtuple("Check", "t col value")
Assign = namedtuple("Assign", "reg value")
# negated: `!match(...)`, `!contains(...)`
Test = namedtuple("Test", "op left right negated", defaults=(False,))
# A disjunction of comparisons (ast.AnyOf) as one test, options: tuples of
# Test: the clause is not split into one clause per option (each its own
# loops and lookups).
Either = namedtuple("Either", "options")
# A disjunction of comparisons that binds variables, `(p = 0, v = -1 ; p > 0,
# v = v0)`, options: tuples of Test, Either and Assign. The rest of the plan
# runs once per option whose Tests hold, after its Assigns (each option
# assigns the same registers). One step, not one clause per option repeating
# the clause's lookups.
Branch = namedtuple("Branch", "options")
Absent = namedtuple("Absent", "relation key values")
Distinct = namedtuple("Distinct", "t")
Fail = namedtuple("Fail", "")
# op: count sum min max mean; inputs: the registers bound outside that its
# steps read; target: the value aggregated (None: count)
Aggregate = namedtuple("Aggregate", "reg op inputs steps target")
# relation: the head relation's number in the stratum; clause: the program's
# clause index (-1: none), for the rule id
Emit = namedtuple("Emit", "relation clause values")
Holds = namedtuple("Holds", "")


@dataclass(frozen=True)
class ClausePlan:
    steps: tuple
    nregs: int
    ntuples: int
    kinds: tuple         # register -> its kind ("number", "symbol", ...), None when unknown
    arity: int           # registers 0..arity-1 hold the delta tuple (0: none)
    loc: object = None   # the clause's first literal (errors)


class Unsupported(Exception):
    pass


INTEGER_KINDS = frozenset({"number", "unsigned"})
_INTEGER_OPS = frozenset({"+", "-", "*", "/", "%", "min", "max", "neg"})


def is_integer(e, kinds) -> bool:
    """A value known to hold an integer (no float anywhere in it)."""
    if isinstance(e, Const):
        return isinstance(e.value, int)
    if isinstance(e, Reg):
        return kinds[e.n] in INTEGER_KINDS
    return isinstance(e, Call) and e.op in _INTEGER_OPS and all(is_integer(a, kinds) for a in e.args)


# ---------------------------------------------------------------- the planner
@dataclass
class Context:
    """What planning a stratum's clauses reads: relation sizes (`size(rel)`,
    None when unknown), the relations of the stratum (`live`, looked up
    through indexes kept up to date), `index_key(rel, key)` (the columns of
    the index a lookup of a relation below uses), `live_key` (the same for
    live relations), `fanout(rel, key)` (tuples per key: join order by it,
    rank-ordered strata)."""
    size: object
    live: frozenset = frozenset()
    index_key: object = None
    live_key: object = None
    fanout: object = None


class _Registers:
    """The registers and tuple slots of one clause (its aggregates share them)."""

    def __init__(self, arity: int, kinds: dict | None):
        self.kinds: list = [None] * arity
        self.var_kinds = kinds or {}
        self.ntuples = 0

    def new(self, name: str | None = None) -> int:
        self.kinds.append(self.var_kinds.get(name))
        return len(self.kinds) - 1


class _BodyPlanner:
    """The steps of one body (a clause's, or an aggregate's)."""

    def __init__(self, ctx: Context, regs: _Registers, items, bound: dict, run_once: bool):
        self.ctx = ctx
        self.regs = regs
        self.items = items                  # everything of the clause (aggregates' injected variables)
        self.outer = set(bound)             # variables bound outside (aggregate bodies)
        self.bound: dict[str, int] = dict(bound)   # variable -> register
        self.run_once = run_once            # a body run once: its first loop may scan for constants
        self.loops = 0
        self.steps: list = []
        self.deferred: list[Comparison] = []
        self.distinct: int | None = None    # body atom whose tuples must differ from the delta one

    def bind_var(self, name: str, reg: int | None = None) -> int:
        if reg is None:
            reg = self.regs.new(name)
        elif self.regs.kinds[reg] is None:
            self.regs.kinds[reg] = self.regs.var_kinds.get(name)
        self.bound[name] = reg
        return reg

    def column(self, t: int | None, col: int) -> int:
        """The register holding column `col` of tuple slot t (None: of the
        delta tuple, in registers 0..arity-1)."""
        if t is None:
            return col
        reg = self.regs.new()
        self.steps.append(Bind(reg, t, col))
        return reg

    # ---- values ----
    def can_compute(self, e) -> bool:
        """Whether the variables e needs are bound (semantics.needed says
        which; walked here directly: planning asks it thousands of times)."""
        if isinstance(e, Var):
            return e.name in self.bound
        if isinstance(e, (NumberLit, StringLit)):
            return True
        if isinstance(e, Functor):
            return all(self.can_compute(a) for a in e.args)
        if isinstance(e, AggregateExpr):
            return all(n in self.bound for n in injected(e, self.items, self.outer))
        return False

    def value(self, e):
        if isinstance(e, Var):
            if e.name not in self.bound:
                raise Unsupported(f"variable {e.name} used before it is bound")
            return Reg(self.bound[e.name])
        if isinstance(e, NumberLit):
            return Const(float(e.value) if e.kind == "float" else e.value)
        if isinstance(e, StringLit):
            return Const(e.value)
        if isinstance(e, Functor):
            return Call(e.op, tuple(self.value(a) for a in e.args))
        if isinstance(e, AggregateExpr):
            return self.aggregate(e)
        raise Unsupported(f"expression {e!r}")

    def aggregate(self, agg: AggregateExpr) -> Reg:
        names = sorted(injected(agg, self.items, self.outer))
        sub = _BodyPlanner(self.ctx, self.regs, list(agg.body) + ([agg.target] if agg.target is not None else []),
                           {n: self.bound[n] for n in names}, run_once=False)
        sub.plan(agg.body, None)
        target = sub.value(agg.target) if agg.target is not None else None
        reg = self.regs.new()
        if agg.op == "count" or (agg.op in ("sum", "min", "max") and is_integer(target, self.regs.kinds)):
            self.regs.kinds[reg] = "number"
        self.steps.append(Aggregate(reg, agg.op, tuple(self.bound[n] for n in names), tuple(sub.steps), target))
        return Reg(reg)

    def integer(self, e) -> bool:
        """An expression known to hold an integer (is_integer, before it has registers)."""
        if isinstance(e, NumberLit):
            return e.kind != "float" and isinstance(e.value, int)
        if isinstance(e, Var):
            return self.regs.var_kinds.get(e.name) in INTEGER_KINDS
        return isinstance(e, Functor) and e.op in _INTEGER_OPS and all(self.integer(a) for a in e.args)

    # ---- literals ----
    def atom(self, atom: Atom, delta: bool, index: int = -1) -> None:
        """Loop over the atom's tuples (the delta atom: its tuple is in
        registers 0..arity-1, no loop), binding or testing its arguments."""
        key, t = [], None   # (t: the atom's tuple slot; None for the delta atom)
        if not delta:
            key = self.index_key(atom, [i for i, a in enumerate(atom.args) if self.can_compute(a)])
            t = self.regs.ntuples
            self.regs.ntuples += 1
            if key:
                self.steps.append(Lookup(t, atom.relation, tuple(key),
                                         tuple(self.value(atom.args[i]) for i in key)))
            else:
                self.steps.append(Scan(t, atom.relation))
            self.loops += 1
        for i, a in enumerate(atom.args):
            if i in key or isinstance(a, Wildcard):
                continue
            if isinstance(a, Var) and a.name not in self.bound:
                self.bind_var(a.name, self.column(t, i))
            elif self.can_compute(a):
                value = self.value(a)
                self.steps.append(Test("=", Reg(i), value) if t is None else Check(t, i, value))
            elif not self.solve(a, t, i):
                # an expression of variables bound later: checked once they are
                reg = self.column(t, i)
                name = f" t{reg}"   # (no variable has a space in its name)
                self.bound[name] = reg
                self.deferred.append(Comparison("=", Var(name, a.loc), a, a.loc))
        if index == self.distinct and not delta:
            # the dominating atom is looped over after the delta; skip the delta tuple itself
            self.steps.append(Distinct(t))

    def index_key(self, atom: Atom, key: list[int]) -> list[int]:
        """The columns to look `atom` up by: the bound ones, or fewer.
        Building an index costs a pass over the relation: a lookup whose
        only key is constants at the outermost loop of a body run once
        scans instead; index_key may choose fewer columns (an index that
        serves other lookups too)."""
        ctx = self.ctx
        if not key:
            return key
        if atom.relation in ctx.live:
            return list(ctx.live_key(atom.relation, tuple(key))) if ctx.live_key else key
        if self.run_once and self.loops == 0 and all(isinstance(atom.args[i], (NumberLit, StringLit)) for i in key):
            return []
        if ctx.index_key is None or len(key) < 2:
            return key
        return list(ctx.index_key(atom.relation, tuple(key)))

    def solve(self, e, t: int | None, col: int) -> bool:
        """Bind the one unbound variable of an integer argument `x + c`,
        `c + x` or `x - c` (c computable) from the column's value: the
        variable is known at once (an index key for what follows) instead
        of checked later."""
        if not (isinstance(e, Functor) and e.op in ("+", "-") and len(e.args) == 2):
            return False
        x, c = e.args
        if e.op == "+" and not (isinstance(x, Var) and x.name not in self.bound):
            x, c = c, x
        if not (isinstance(x, Var) and x.name not in self.bound and self.can_compute(c)
                and self.integer(x) and self.integer(c)):
            return False
        source = self.column(t, col)
        self.regs.kinds[source] = self.regs.var_kinds[x.name]   # (an integer, as x)
        reg = self.bind_var(x.name)
        self.steps.append(Assign(reg, Call("-" if e.op == "+" else "+", (Reg(source), self.value(c)))))
        return True

    def negation(self, neg: Negation) -> None:
        atom = neg.atom
        if atom.relation not in self.ctx.live and self.ctx.size(atom.relation) == 0:
            return   # nothing to be absent from: always true
        key = tuple(i for i, a in enumerate(atom.args) if not isinstance(a, Wildcard))
        self.steps.append(Absent(atom.relation, key, tuple(self.value(atom.args[i]) for i in key)))

    def assignment(self, c: Comparison) -> bool:
        if c.op != "=":
            return False
        for a, b in ((c.left, c.right), (c.right, c.left)):
            if isinstance(a, Var) and a.name not in self.bound and self.can_compute(b):
                value = self.value(b)
                self.steps.append(Assign(self.bind_var(a.name), value))
                return True
        return False

    def ready(self, lit) -> bool:
        if isinstance(lit, Negation):
            return all(self.can_compute(a) for a in lit.atom.args if not isinstance(a, Wildcard))
        if isinstance(lit, (Comparison, AnyOf)):
            return all(self.can_compute(e) for e in literal_exprs(lit))
        return False

    def branch(self, lit: AnyOf, todo) -> bool:
        """A disjunction that binds variables, once every option can bind
        them from what is bound (semantics.split_binding_disjunctions keeps
        only such) and no atom of `todo` had better bind them: a Branch step."""
        names = {v for e in literal_exprs(lit) for v in _names(e)} - set(self.bound)
        if not names:
            return False
        orders = [_ordered(option, set(self.bound), names) for option in lit.options]
        if None in orders or self.bound_later(names, lit, todo):
            return False
        regs = {n: self.regs.new(n) for n in sorted(names)}
        outer, options = (self.bound, self.steps), []
        for order in orders:
            self.bound, self.steps = dict(outer[0]), []
            for c in order:
                if isinstance(c, AnyOf):
                    self.steps.append(self.either(c))
                elif (x := _binding(c, set(self.bound))) is not None and x[0] in regs:
                    self.steps.append(Assign(regs[x[0]], self.value(x[1])))
                    self.bound[x[0]] = regs[x[0]]
                else:
                    self.steps.append(self.test(c))
            options.append(tuple(self.steps))
        self.bound, self.steps = outer
        self.bound.update(regs)
        self.steps.append(Branch(tuple(options)))
        return True

    def bound_later(self, names: set, lit: AnyOf, todo) -> bool:
        """Whether a disjunction that could bind `names` had better wait for
        an atom that binds them all and reads them nowhere else (`(x =
        NO_UNIT ; x = vv), rel(a, b, x)` with a or b bound): one lookup of
        rel and a test (an Either once x is bound) instead of a lookup per
        option."""
        binders = [a for _, a in todo if isinstance(a, Atom) and names <= {x.name for x in a.args if isinstance(x, Var)}
                   and any(not isinstance(x, Wildcard) and self.can_compute(x) for x in a.args)]
        if len(binders) != 1:
            return False
        others = [other for _, other in todo if other is not lit and other is not binders[0]]
        return not any(names & _names(e) for other in others for e in literal_exprs(other))

    def test(self, c: Comparison) -> Test:
        return Test(c.op, self.value(c.left), self.value(c.right), c.negated)

    def either(self, lit: AnyOf) -> Either:
        """The options of a disjunction, those nested in it multiplied out."""
        options = []
        for option in lit.options:
            tests = [()]
            for c in option:
                alternatives = self.either(c).options if isinstance(c, AnyOf) else ((self.test(c),),)
                tests = [t + a for t in tests for a in alternatives]
            options += tests
        return Either(tuple(options))

    def score(self, a: Atom):
        ctx = self.ctx
        key = tuple(i for i, x in enumerate(a.args) if self.can_compute(x))
        live = a.relation in ctx.live
        if live and len(key) == sum(not isinstance(x, Wildcard) for x in a.args):
            # a membership probe of a relation of the stratum first: it binds
            # nothing, and the tuple it asks for is often not derived yet (a
            # rank-ordered stratum: the delta's own consequence, of a later rank)
            return (True, True, float("inf"), 0)
        if ctx.fanout is not None and key and not live:
            # the fewest tuples per lookup first (known from the index itself: the one it will use)
            if ctx.index_key is not None and len(key) > 1:
                key = tuple(ctx.index_key(a.relation, key))
            return (True, True, -ctx.fanout(a.relation, key), 0)
        size = ctx.size(a.relation)
        # index lookups first (live relations last: they grow), then small scans
        return (bool(key), not live, len(key) - (0 if live else 0.5), -(1000 if size is None else size))

    def plan(self, body, delta_index: int | None) -> None:
        todo = list(enumerate(body))
        if delta_index is not None:
            todo = [(i, lit) for i, lit in todo if i != delta_index]
            self.atom(body[delta_index], delta=True)
            todo += [(-1, c) for c in self.deferred]
            self.deferred = []
        while todo:
            for k, (i, lit) in enumerate(todo):
                if isinstance(lit, BoolLit):
                    if not lit.value:
                        self.steps.append(Fail())
                elif isinstance(lit, Comparison) and self.assignment(lit):
                    pass
                elif isinstance(lit, AnyOf) and self.branch(lit, todo):
                    pass
                elif self.ready(lit):
                    if isinstance(lit, Negation):
                        self.negation(lit)
                    elif isinstance(lit, AnyOf):
                        self.steps.append(self.either(lit))
                    else:
                        self.steps.append(self.test(lit))
                elif isinstance(lit, (Atom, Negation, Comparison, AnyOf)):
                    continue
                todo.pop(k)
                break
            else:
                atoms = [(i, lit) for i, lit in todo if isinstance(lit, Atom) and all(
                    isinstance(x, (Var, Wildcard)) or self.can_compute(x) for x in lit.args)]
                if not atoms:
                    raise Unsupported("no literal can be evaluated next")
                i, a = max(atoms, key=lambda item: self.score(item[1]))
                todo.remove((i, a))
                self.atom(a, delta=False, index=i)
                todo += [(-1, c) for c in self.deferred]
                self.deferred = []


def _names(e) -> set:
    return {v.name for v in variables(e, into_aggregates=False)}


def _binding(c, known: set):
    """(x, e) when comparison c is `x = e` (or `e = x`) with x not in
    `known` and e computable from it; else None."""
    if not isinstance(c, Comparison) or c.op != "=":
        return None
    for a, b in ((c.left, c.right), (c.right, c.left)):
        if isinstance(a, Var) and a.name not in known and _names(b) <= known:
            return a.name, b
    return None


def _ordered(option, known: set, names: set):
    """The literals of an option of a disjunction in an order that binds
    `names` by `x = e` and tests the rest once they can be (None: the
    option cannot bind them all)."""
    known, todo, out = set(known), list(option), []
    while todo:
        for lit in todo:
            x = _binding(lit, known)
            if x is not None and x[0] in names:
                known.add(x[0])
            elif x is not None or not set().union(*map(_names, literal_exprs(lit))) <= known:
                continue
            out.append(lit)
            todo.remove(lit)
            break
        else:
            return None
    return out if names <= known else None


def plan_clause(ctx: Context, body, head, relation: int, clause: int, kinds: dict | None,
                delta: int | None = None, arity: int = 0, distinct: int | None = None) -> ClausePlan:
    """The plan of one clause: its body (the atom at `delta` read from the
    delta tuple, of `arity` columns), then Emit(head) into the stratum's
    relation number `relation` (head None: Holds, a domination test, whose
    body atom `distinct` must be another tuple than the one tested)."""
    regs = _Registers(arity, kinds)
    items = list(body) + list(head or ())
    p = _BodyPlanner(ctx, regs, items, {}, run_once=delta is None)
    p.distinct = distinct
    loc = body[0].loc if body else None
    try:
        p.plan(list(body), delta)
        if head is None:
            p.steps.append(Holds())
        else:
            p.steps.append(Emit(relation, clause, tuple(p.value(e) for e in head)))
    except Unsupported as e:
        from sdylog.datalog.lexer import error
        raise error(loc, f"cannot compile this rule: {e}") from None
    return ClausePlan(tuple(p.steps), len(regs.kinds), regs.ntuples, tuple(regs.kinds), arity, loc)


# ---------------------------------------------------------------- strata
@dataclass(frozen=True)
class StratumPlan:
    """The plans of a plain or recursive stratum: its clauses that read no
    relation of it (run once), and per relation of it, the plans that read
    it as their delta (semi-naive rounds). Clause k's Emit names clause k
    of the program."""
    base: tuple
    deltas: tuple


def plan_stratum(program, stratum, ctx: Context) -> StratumPlan:
    """Every clause of `stratum` planned (but those clause_groups leaves out)."""
    rid = {r: i for i, r in enumerate(stratum.relations)}
    live = replace(ctx, live=frozenset(rid))
    base, deltas = clause_groups(program, stratum, ctx.size)
    return StratumPlan(tuple(plan_of(ctx, program, ci, rid) for ci in base),
                       tuple(tuple(plan_of(live, program, ci, rid, p) for ci, p in g) for g in deltas))


def clause_groups(program, stratum, size) -> tuple[list, list]:
    """The clauses of `stratum` that read none of its relations, and per
    relation of it, (clause, position) of each atom of it in a clause: the
    plans reading it as their delta. A clause with an atom of an empty
    relation below the stratum has no solution: it is left out."""
    rid = {r: i for i, r in enumerate(stratum.relations)}
    base, deltas = [], [[] for _ in rid]
    for ci in stratum.clauses:
        body = program.clauses[ci].body
        if dead(body, size, rid):
            continue
        positions = [i for i, lit in enumerate(body) if isinstance(lit, Atom) and lit.relation in rid]
        if not positions:
            base.append(ci)
        for p in positions:
            deltas[rid[body[p].relation]].append((ci, p))
    return base, deltas


def plan_of(ctx: Context, program, ci: int, rid: dict, delta: int | None = None) -> ClausePlan:
    """plan_clause of the program's clause `ci`, emitting into the relation
    numbered rid[its head]; `delta`: the position of its delta atom."""
    c = program.clauses[ci]
    arity = 0 if delta is None else len(c.body[delta].args)
    return plan_clause(ctx, c.body, c.head.args, rid[c.head.relation], ci, program.clause_kinds[ci], delta, arity)


def dead(body, size, here) -> bool:
    """A body with an atom of an empty relation (outside the stratum
    `here`) has no solution: its clause never fires."""
    return any(isinstance(lit, Atom) and lit.relation not in here and size(lit.relation) == 0 for lit in body)


# ---------------------------------------------------------------- plans kept per program
# (A program saved with plans made by other code is not read: cache.engine_stamp.)


class PlanCache:
    """The plans made for a program, kept for its life (in
    program.run_cache; a program cached on disk is saved again with its
    plans at exit, cache.py), each with the sizes of the relations its
    planning read. A plan made
    for other sizes serves unless another one is likely much better: it is
    made again when a relation it read was empty and is not (or the other
    way round: a clause of an empty relation has no plan, a negation of
    one no step), or when a size changed by more than FACTOR (sizes below
    FLOOR count as FLOOR: the join order of small relations matters little).
    Planning is a function of those sizes and of index statistics; the
    symbols and rule ids a plan names are bound at each run (native_plan).
    On a small module planning was most of a rule evaluation's time.
    A plan is kept with the range of sizes (bounds) of each relation it
    read, None for one of unknown size. A plan made again the same (`same`:
    what the caller says makes two plans the same) as one kept widens that
    one's ranges to cover both instead of being kept twice: over models of
    many sizes, half the plans made were the same as one kept, and every
    start reads and offers C each plan kept.

    Of the plans kept that fit, the nearest serves (`nearest`: the least
    distance, summed over the relations it read of a size now and then, of
    log2 of the size now to the nearest planned for: a plan made on a
    small module fits a big one's sizes up to FACTOR times its own, and
    served transformer_L48 16 times worse in a stratum), the latest used
    among equals. C runs the first plan offered that fits
    (native_db._offered offers them nearest first)."""

    FACTOR = 8
    FLOOR = 64
    KEPT = 4     # plans per key (a pipeline runs a program on a few modules)

    def __init__(self):
        self._kept: dict = {}   # key (a stratum's relations, ...) -> [(sizes read, plan)], latest first
        # plans made since the program was loaded or made (cache.py saves them; native_db._batch
        # makes its batches again)
        self.added = 0

    def __getstate__(self):
        # (plans of the Python path are not saved: it runs few strata but with
        # provenance or SDYLOG_NATIVE=0. The others are saved as they are: their
        # parts a run seldom reads, the C programs once bound and a rank-ordered
        # stratum's Python plans, are Pickled, read when first used.)
        return {"_kept": {k: v for k, v in self._kept.items() if k[0] != "py"}, "added": 0}

    def get(self, key, size, make, same=None):
        """The plan make(sizes) gives for `key`, or one kept that fits the
        sizes now (size(relation): its tuple count, None when unknown);
        `sizes` (what make must read sizes through) logs what it reads.
        same(plan): what makes two plans the same (None: not comparable);
        without it no two are."""
        kept = self._kept.setdefault(key, [])
        fitting = [got for got in kept if all(self._fits(size(rel), r) for rel, r in got[0].items())]
        if fitting:
            got = self.nearest(fitting, size)[0]
            kept.insert(0, kept.pop(next(k for k, other in enumerate(kept) if other is got)))
            return got[1]
        log = _SizeLog(size)
        made = make(log)
        ranges = {rel: None if was is None else self.bounds(was) for rel, was in log.seen.items()}
        this = same(made) if same is not None else None
        for k, (other, twin) in enumerate(kept if this is not None else ()):
            if self._joinable(ranges, other) and same(twin) == this:
                kept.pop(k)
                ranges = {rel: r and (min(r[0], other[rel][0]), max(r[1], other[rel][1])) for rel, r in ranges.items()}
                made = twin
                break
        kept.insert(0, (ranges, made))
        del kept[self.KEPT:]
        self.added += 1
        return made

    def kept(self, key) -> list:
        """(ranges of sizes, plan) of the plans kept for `key`, the latest first."""
        return self._kept.get(key, [])

    def nearest(self, kept: list, size) -> list:
        """The plans `kept` ((ranges, plan), as kept returns them), the
        nearest to the sizes now first (size: as get's), the latest used
        first among equals."""
        if len(kept) < 2:
            return kept
        return sorted(kept, key=lambda got: self.distance(got[0], size))

    def distance(self, ranges: dict, size) -> float:
        """How far the sizes now are from those a plan was made for: over
        the relations it read, of a size (not 0) now and then, the sum of
        log2 of the size now to the nearest size planned for (from its
        range: FACTOR inside each end), each counted at least FLOOR."""
        far = 0.0
        for rel, r in ranges.items():
            now = size(rel)
            if r is not None and r[1] and now:
                now, top = max(now, self.FLOOR), r[1] // self.FACTOR
                low = min(max(r[0] * self.FACTOR, self.FLOOR), top)
                far += math.log2(low / now) if now < low else math.log2(now / top) if now > top else 0.0
        return far

    def bounds(self, was: int) -> tuple[int, int]:
        """The sizes a relation of `was` tuples when planned may have now for
        the plan to serve."""
        if was == 0:
            return 0, 0
        b = max(was, self.FLOOR)
        return (1 if b <= self.FACTOR * self.FLOOR else -(-b // self.FACTOR)), self.FACTOR * b

    @staticmethod
    def _fits(now, bounds) -> bool:
        if now is None or bounds is None:
            return now is bounds
        return bounds[0] <= now <= bounds[1]

    @staticmethod
    def _joinable(ranges: dict, other: dict) -> bool:
        """Whether two plans read the same relations, each unknown in both,
        empty in both or in neither: sizes choose among equivalent plans,
        emptiness drops clauses and steps (ranges joined across it, C gave
        other rows: test_memory_engine's test_c_and_python_agree)."""
        def kind(r):
            return None if r is None else r == (0, 0)
        return ranges.keys() == other.keys() and all(kind(r) == kind(other[rel]) for rel, r in ranges.items())


class _SizeLog:
    def __init__(self, size):
        self.size, self.seen = size, {}

    def __call__(self, relation: str):
        if relation not in self.seen:
            self.seen[relation] = self.size(relation)
        return self.seen[relation]


def plans_of(program) -> PlanCache:
    """The program's PlanCache."""
    plans = program.run_cache.get("plans")
    if plans is None:   # (not setdefault: asked hundreds of times a run, made once)
        plans = program.run_cache["plans"] = PlanCache()
    return plans
