"""Rank-ordered evaluation of a stratum with subsumptive rules, in memory.

A stratum in which some relation has subsumptive rules
(`R(..) <= R(..) :- body.`, Soufflé's syntax) is evaluated here, in rank
order rather than semi-naively. Each relation of such a stratum has a
*rank*: its columns whose type is `Rank` (any subtype of number) or a
subset type of it (`.type Phase <: Rank`), in declaration order, compared
lexicographically; every relation of the stratum has as many. Tuples are
made final in increasing rank order, like Dijkstra's algorithm:

- the clauses that read no relation of the stratum seed it (run once over
  the lower strata);
- the pending tuples of the smallest rank form a *wave*: each is dropped if
  the relation already holds it, or if another tuple of the relation (one
  already kept, or one of the same wave) subsumes it; the others are kept
  and fire the clauses that read them (semi-naive), which adds pending
  tuples of equal or larger rank (a smaller one is an error: the program
  is not rank-monotone);
- tuples kept are never removed later.

So a subsumed tuple never derives anything, and tuples of equal rank that
subsume each other (a tie) are all dropped. For programs whose subsumptive
rules only let a tuple be dominated by one of smaller or equal rank, this is
the least fixpoint in which no dominated tuple fires. Soufflé evaluates the
same text semi-naively and removes dominated tuples after the fact: it can
keep tuples derived from a tuple that was dominated later, and it keeps one
of two tied tuples; on programs where neither happens the results agree.

Ranks follow long chains (thousands of waves of a few tuples each), so the
cost of a wave is the cost of its few tuples' lookups. Clauses are planned
by plan.py (plans kept per program) and run as Python functions (pyeval.py);
or by the wave loop in C (native/ranked.c) over the tables of the memory
engine's C database, in the call that runs the strata around it
(native_db.py), when the C extension is built, provenance is off, every plan
lowers (native_plan.py), every relation the stratum reads is held in C and
its ranks have at most MAXRANK (native/db.h) columns. SDYLOG_NATIVE=0 keeps
it in Python. The C run hands back to Python on what Python's integers would
compute differently (an overflow), report (a division by zero) or a rank
lowered (the error is reported here): the stratum is then evaluated here,
from the start.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from operator import itemgetter

from sdylog.datalog.lexer import error
from sdylog.datalog.native_plan import lower_stratum
from sdylog.datalog.pickled import Pickled, same_programs
from sdylog.datalog.plan import Context, clause_groups, dead, plan_clause, plan_of, plans_of
from sdylog.datalog.pyeval import Namespace, clause_function, delta_function, domination_function

RANK_TYPE = "Rank"


def rank_columns(decl, types) -> tuple[int, ...]:
    """The columns of a relation's rank: those of type Rank or of a subset
    type of it, in declaration order."""
    cols = tuple(i for i, c in enumerate(decl.columns) if _is_rank_type(c.type_name, types))
    if not cols:
        raise error(decl.loc, f"relation '{decl.name}' is evaluated in rank order (its stratum has "
                    f"subsumptive rules) and needs a column of type {RANK_TYPE} (or of a subset type of it)")
    return cols


def _is_rank_type(name: str, types) -> bool:
    """Rank, or a subset type of it at any depth (the types are checked: no cycle)."""
    while name != RANK_TYPE:
        t = types.get(name)
        if t is None or not t.subset:
            return False
        name = t.bases[0]
    return True


def show_rank(rank) -> str:
    """A rank as rank_of gives it: one value, or a tuple of several."""
    return "(" + ", ".join(map(str, rank)) + ")" if isinstance(rank, tuple) else str(rank)


class RankedStratum:
    """A subsumptive stratum of a program: its relations, their ranks, and
    its plans (made for the sizes of the relations below, kept per program).
    The C evaluator runs the plans lowered (native_db.py); RankedEvaluation
    runs them in Python."""

    def __init__(self, program, stratum):
        self.program = program
        self.stratum = stratum
        self.rels = list(stratum.relations)
        self.here = set(self.rels)
        self.rid = {r: i for i, r in enumerate(self.rels)}
        self.rank_cols = [rank_columns(program.relations[r], program.types) for r in self.rels]
        if len({len(c) for c in self.rank_cols}) > 1:
            decl = program.relations[self.rels[0]]
            raise error(decl.loc, "the relations of a rank-ordered stratum need ranks of as many columns: "
                        + ", ".join(f"{r} has {len(c)}" for r, c in zip(self.rels, self.rank_cols)))
        # tuple -> its rank: one value, or a tuple of them (compared lexicographically)
        self.rank_of = [itemgetter(*c) for c in self.rank_cols]
    # ---- indexes ----
    def _live_key(self, rel: str, key: tuple) -> tuple:
        """The columns a relation of the stratum is looked up by: not its
        rank when others are bound. Subsumption keeps few ranks per value of
        the other columns, and a tie rule (`r2 = r1, ...`) would otherwise
        add an index (one more to keep up to date on every insert)."""
        ranks = self.rank_cols[self.rid[rel]]
        rest = tuple(i for i in key if i not in ranks)
        return rest if rest and len(rest) < len(key) else key

    def plans(self, static) -> RankedPlans:
        """The stratum's plans, made with what `static` (the indexes of the
        relations below) says of sizes and keys; kept per program."""
        return plans_of(self.program).get(("ranked", self.stratum.relations), static.size,
                                          lambda sizes: self._plan(static, sizes), lambda made: same_programs(made.lowered))

    def _plan(self, static, size) -> RankedPlans:
        prog = self.program
        here, rid = self.here, self.rid

        def empty_below(rel):   # (what the planner reads as sizes: 0 for an empty relation below, else unknown)
            return 0 if rel not in here and size(rel) == 0 else None
        base_clauses, groups = clause_groups(prog, self.stratum, size)   # (base: the seeds)
        tests: list[list] = [[] for _ in self.rels]
        for si, s in enumerate(prog.subsumptions):
            if s.relation in here:
                body = s.as_clause().body
                if not dead(body, size, here):
                    tests[rid[s.relation]].append((body, prog.subsumption_kinds[si]))

        def make(live_key):
            ctx = Context(empty_below, here, static.index_key, live_key, static.fanout)
            deltas = tuple(tuple(plan_of(ctx, prog, ci, rid, p) for ci, p in g) for g in groups)
            dctx = Context(lambda rel: None, here, static.index_key, live_key)
            doms = tuple(tuple(plan_clause(dctx, body, None, 0, -1, kinds, delta=0, arity=len(body[0].args), distinct=1)
                               for body, kinds in t) for t in tests)
            return deltas, doms
        # Planned twice: first to learn the columns each relation of the stratum
        # is looked up by, then with lookups served by fewer indexes (see _coarse_keys).
        asked: dict[str, set] = {}

        def first_key(rel, key):
            k = self._live_key(rel, key)
            asked.setdefault(rel, set()).add(k)
            return k
        deltas, doms = make(first_key)
        coarse = _coarse_keys(asked)
        if coarse:
            deltas, doms = make(lambda rel, key: coarse.get((rel, k := self._live_key(rel, key)), k))
        bctx = Context(empty_below, index_key=static.index_key)
        base = tuple(plan_of(bctx, prog, ci, rid) for ci in base_clauses)
        return RankedPlans(Pickled.of(PythonPlans(deltas, doms, base)), lower_stratum(base, deltas, here, doms))


class RankedEvaluation(RankedStratum):
    """One evaluation of one subsumptive stratum in Python (see the module
    docstring).

    `engine` (a MemoryEngine) holds what lies outside the stratum: the
    relations it reads (their indexes: engine._static), the facts loaded
    into its relations, the rule ids and heights of provenance; it receives
    the result (engine._store)."""

    def __init__(self, engine, program, stratum):
        super().__init__(program, stratum)
        self.engine = engine
        self.ns = Namespace()
        self.provenance = engine.provenance
        self.prov: list[dict] = [{} for _ in self.rels]

    def _rule_id(self, ci: int) -> int:
        return self.engine._rule_id(self.program, ci)

    def _rank_error(self, rule: int, rank, cur):
        program, ci = self.engine.rules[rule]
        c = program.clauses[ci]
        return error(c.loc, f"rule for '{c.head.relation}' derived a tuple of rank {show_rank(rank)} from "
                     f"tuples of rank {show_rank(cur)}: rank-ordered rules must not lower ranks")

    # ---- evaluation ----
    def run(self) -> None:
        plans = self.plans(self.engine._static).python.value
        # per relation: a function running every clause that reads it on a delta, the test `is this tuple dominated`
        delta_fns = [delta_function(self.ns, g, self._rule_id) if g else None for g in plans.deltas]
        dominated = [domination_function(self.ns, t) if t else None for t in plans.doms]
        stores, inserters, removers = self.ns.stores(self.rid)
        self.engine._bind(self.ns)
        pending: dict[int, list] = {}   # rank above the current one -> its tuples, in order
        heap: list[int] = []            # the ranks in pending
        same: list = []                 # tuples of the current rank derived by its waves: the next wave
        rank_of = self.rank_of
        heappush = heapq.heappush
        cur = None   # (the rank of the wave running: none while seeding)

        def emit(ri, tup, rule):
            r = rank_of[ri](tup)
            if r == cur:
                # (half the tuples: no dict, no heap; nothing pending is below the current rank)
                same.append((ri, tup, rule))
                return
            lst = pending.get(r)
            if lst is None:
                # (ranks pending are never below the current one: check new ones only)
                if cur is not None and r < cur:
                    raise self._rank_error(rule, r, cur)
                pending[r] = lst = []
                heappush(heap, r)
            lst.append((ri, tup, rule))

        self._seed(plans.base, emit)
        provenance, prov = self.provenance, self.prov
        height = self.engine._next_height()
        heappop = heapq.heappop
        while True:
            if same:
                wave, same = same, []
            elif heap:
                cur = heappop(heap)
                wave = pending.pop(cur)
            else:
                break
            height += 1
            new: dict[int, list] = {}
            rules: dict = {}
            for ri, tup, rule in wave:
                if inserters[ri](tup):
                    new.setdefault(ri, []).append(tup)
                    if provenance:
                        rules[(ri, tup)] = rule
            # domination after the whole wave is in: tuples of one rank that
            # dominate each other (a tie) all go
            for ri, tups in new.items():
                out = set(filter(dominated[ri], tups)) if dominated[ri] is not None else ()
                if out:
                    for t in out:
                        removers[ri](t)
                    new[ri] = [t for t in tups if t not in out]
            for ri, tups in new.items():
                if provenance:
                    p = prov[ri]
                    for t in tups:
                        p[t] = (rules[(ri, t)], height)
                fn = delta_fns[ri]
                if tups and fn is not None:
                    fn(tups, emit)
        self.engine._height = height
        for ri, name in enumerate(self.rels):
            self.engine._store(name, stores[ri], self.prov[ri] if provenance else None)
        # (refcounting frees the indexes now, rather than a later pass of the
        # cyclic collector over everything allocated)
        self.ns.release()
        self.engine = None   # compilers kept in cycles must not keep the engine alive

    def _seed(self, base, emit) -> None:
        """emit(relation index, tuple, rule id) the stratum's loaded tuples,
        then those of the clauses that read none of its relations (`base`:
        PythonPlans.base, whose Emit steps name the relation's index and the
        rule as emit takes them)."""
        eng = self.engine
        for ri, name in enumerate(self.rels):
            for tup in eng._loaded.get(name) or ():
                emit(ri, tup, -1)
        ns = Namespace()
        fns = [clause_function(ns, p, rule_of=self._rule_id) for p in base]
        eng._bind(ns)
        for fn in fns:
            fn(emit)


@dataclass(frozen=True)
class PythonPlans:
    """The plans of a rank-ordered stratum (plan.py's), as the Python evaluator runs them."""
    deltas: tuple   # per relation of the stratum: the plans that read it as a delta
    doms: tuple     # per relation: its domination tests (the dominated tuple in registers, the dominating one atom 1)
    base: tuple     # the plans of the clauses that read no relation of the stratum (its seeds)


@dataclass(frozen=True)
class RankedPlans:
    """`python`: the PythonPlans, pickled (pickled.py) until the Python evaluator
    runs them; `lowered`: their C programs (native_plan.lower_stratum), pickled until bound
    (native_db: a plan saved bound with its layout is not bound again)."""
    python: Pickled
    lowered: Pickled | None


class StaticIndexes:
    """Indexes over relations that do not change while they are read (the
    strata below the one being evaluated), built on first use, and the
    choice of the columns a lookup uses. `rows(relation)` gives a
    relation's tuples; forget_all(relations) drops what was built on them."""

    # an index on part of a lookup's columns serves it (the rest tested on
    # each tuple it gives) when it gives at most this many tuples per key
    SELECTIVE = 4.0
    SAMPLE = 2048

    def __init__(self, rows):
        self.rows = rows
        self._built: dict[str, dict] = {}         # relation -> {(key, negated): index}
        self._fanout: dict[str, dict] = {}        # relation -> {key: tuples per key} (keyed, not negated)
        self._share: dict[str, dict] = {}         # relation -> {column: distinct values per tuple}

    def index(self, rel: str, key: tuple, negated: bool = False):
        built = self._built.setdefault(rel, {})
        idx = built.get((key, negated))
        if idx is None:
            rows = self.rows(rel)
            idx = built[(key, negated)] = build_index(rows, key, negated)
            if key and not negated:
                self._fanout.setdefault(rel, {})[key] = len(rows) / max(len(idx), 1)
        return idx

    def forget_all(self, relations) -> None:
        """What was built on each of `relations` dropped (most have nothing;
        in a warm run of C, usually none has: its plans are kept, the
        statistics of planning not asked for)."""
        if not (self._built or self._fanout or self._share):
            return   # (nothing built: a run's hundreds of relations are not even made a set)
        relations = set(relations)   # (read once per map below)
        for held in (self._built, self._fanout, self._share):
            if held:
                for rel in held.keys() & relations:
                    del held[rel]

    def clear(self) -> None:
        for held in (self._built, self._fanout, self._share):
            held.clear()

    def size(self, rel: str) -> int:
        return len(self.rows(rel))

    def built(self, rel: str) -> dict:
        """Key columns -> tuples per key, of the indexes on `rel` built so far
        (keyed, not negated)."""
        return self._fanout.get(rel, {})

    def fanout(self, rel: str, key: tuple) -> float:
        """Tuples per key of the index on `key` (what a lookup yields on average)."""
        rows = self.rows(rel)
        if not rows:
            return 0.0
        return len(rows) / max(len(self.index(rel, key)), 1)

    def index_key(self, rel: str, key: tuple) -> tuple:
        """The columns to look `rel` up by when `key` is bound: an index
        already built on part of them, or a single column that is selective
        by itself, rather than a new index on all of them. An index costs a
        pass over the relation; one on a single column serves more lookups."""
        have = self.built(rel)
        if key in have:
            return key
        fits = [(fan, -len(k), k) for k, fan in have.items() if set(k) <= set(key) and fan <= self.SELECTIVE]
        if fits:
            return min(fits)[2]
        if not self.size(rel):
            return key
        best = max(key, key=lambda i: self._distinct_share(rel, i))
        # (a sample of rows in insertion order can hold more distinct values
        # than the relation has per row: beyond it, the index's own fanout
        # decides; it is built either way when it serves the lookup)
        if self._distinct_share(rel, best) >= 1 / self.SELECTIVE and (
                self.size(rel) <= self.SAMPLE or self.fanout(rel, (best,)) <= self.SELECTIVE):
            return (best,)
        return key

    def _distinct_share(self, rel: str, col: int) -> float:
        """Distinct values per tuple in column `col` of `rel`, on a sample
        of its tuples (in no meaningful order). A sample overestimates it,
        so the test against SELECTIVE is made stricter."""
        stats = self._share.setdefault(rel, {})
        share = stats.get(col)
        if share is None:
            size = self.size(rel)
            share = self._sample_distinct(rel, col) / min(size, self.SAMPLE)
            if size > self.SAMPLE:
                share /= 2
            stats[col] = share
        return share

    def _sample_distinct(self, rel: str, col: int) -> int:
        """Distinct values in column `col` of the first SAMPLE tuples of `rel`."""
        from itertools import islice
        return len(set(map(itemgetter(col), islice(self.rows(rel), self.SAMPLE))))


def _coarse_keys(asked: dict[str, set]) -> dict[tuple, tuple]:
    """(relation, key) -> a key of fewer columns to look it up by instead:
    the largest of the keys asked for the relation that no other one asked
    contains, among those inside it (the other columns tested on each tuple).
    Each live index is kept up to date on every insert, and subsumption keeps
    few tuples per value of a relation's other columns: fewer indexes cost
    less than the tuples a coarser one gives."""
    out = {}
    for rel, keys in asked.items():
        roots = [k for k in keys if k and not any(o and o != k and set(o) <= set(k) for o in keys)]
        for k in keys:
            if k in roots or not k:
                continue
            inside = [r for r in roots if set(r) < set(k)]
            if inside:
                out[(rel, k)] = max(inside, key=lambda r: (len(r), r))
    return out


def build_index(rows, key: tuple, negated: bool):
    """Index of rows: the rows themselves (no key: a scan), a dict key -> rows,
    or a set of keys (negation). A one-column key is the bare value."""
    from itertools import islice
    if negated:
        if not key:
            return bool(rows)
        if len(key) > 1 and key == tuple(range(len(key))) and isinstance(rows, (set, frozenset)) and all(
                len(r) == len(key) for r in islice(rows, 1)):
            return rows   # every column in order: the relation's own set of tuples is the set of keys
        return set(map(itemgetter(*key), rows))
    if not key:
        return rows
    get = itemgetter(*key)
    d: dict = {}
    setdefault = d.setdefault
    for r in rows:
        setdefault(get(r), []).append(r)
    return d
