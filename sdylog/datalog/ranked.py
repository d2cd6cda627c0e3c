"""Rank-ordered evaluation of a stratum with subsumptive rules, in memory.

A stratum in which some relation has subsumptive rules
(`R(..) <= R(..) :- body.`, Soufflé's syntax) is evaluated here instead of in
SQL. Each relation of such a stratum has one column whose type is named
`Rank` (any subtype of number). Tuples are made final in increasing rank
order, like Dijkstra's algorithm:

- the clauses that read no relation of the stratum seed it (run once, as
  SQL over the lower strata);
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

Why not SQL: ranks follow long chains (thousands of waves of a few tuples
each), and a DuckDB query per wave costs far more than the wave's work.
Clauses are compiled to Python functions (nested loops over hash indexes).
"""
from __future__ import annotations

import heapq

from sdylog.datalog.ast import Atom
from sdylog.datalog.lexer import error
from sdylog.datalog.pyeval import Namespace, compile_clause

RANK_TYPE = "Rank"


def rank_column(decl) -> int:
    cols = [i for i, c in enumerate(decl.columns) if c.type_name == RANK_TYPE]
    if len(cols) != 1:
        raise error(decl.loc, f"relation '{decl.name}' is evaluated in rank order (its stratum has "
                    f"subsumptive rules) and needs exactly one column of type {RANK_TYPE}")
    return cols[0]


class RankedEvaluation:
    """One evaluation of one subsumptive stratum (see the module docstring).

    `backend` gives what lies outside the stratum: rows(relation) for the
    relations it reads, seeds() for the tuples of the clauses that read none
    of its relations (and facts loaded into them), rule_id(ci), next_height(),
    and store(relation, tuples, provenance) for the result."""

    def __init__(self, backend, program, stratum, provenance: bool = False):
        self.backend = backend
        self.program = program
        self.stratum = stratum
        self.rels = list(stratum.relations)
        self.here = set(self.rels)
        self.rid = {r: i for i, r in enumerate(self.rels)}
        self.rank_col = [rank_column(program.relations[r]) for r in self.rels]
        self.ns = Namespace()
        self.store = [set() for _ in self.rels]
        # relation -> [(key positions or None for the list of all, container)]: kept up to date on insert
        self.live_indexes: list[list] = [[] for _ in self.rels]
        self.provenance = provenance
        self.prov: list[dict] = [{} for _ in self.rels]
        self.waves = 0

    # ---- indexes ----
    def _build_indexes(self):
        static_rows: dict[str, list] = {}
        g = self.ns.globals
        for name, (rel, key, negated) in self.ns.specs.items():
            if name in g:
                continue
            if rel in self.here:
                if negated:
                    raise error(None, f"internal: negation of '{rel}' inside its own stratum")
                ri = self.rid[rel]
                container = [] if not key else {}
                self.live_indexes[ri].append((key or None, container))
                g[name] = container
                continue
            if hasattr(self.backend, "index"):
                g[name] = self.backend.index(rel, key, negated)
                continue
            if rel not in static_rows:
                static_rows[rel] = self.backend.rows(rel)
            g[name] = build_index(static_rows[rel], key, negated)

    def _inserter(self, ri: int):
        """A function adding a tuple to relation ri's store and live indexes
        (False if it was there already)."""
        from operator import itemgetter
        store = self.store[ri]
        lists, keyed = [], []
        for key, d in self.live_indexes[ri]:
            if key is None:
                lists.append(d)
            else:
                keyed.append((itemgetter(*key), d))

        def insert(tup):
            if tup in store:
                return False
            store.add(tup)
            for lst in lists:
                lst.append(tup)
            for get, d in keyed:
                k = get(tup)
                lst = d.get(k)
                if lst is None:
                    d[k] = [tup]
                else:
                    lst.append(tup)
            return True
        return insert

    def _remove(self, ri: int, tup: tuple):
        self.store[ri].discard(tup)
        for key, d in self.live_indexes[ri]:
            if key is None:
                d.remove(tup)
            else:
                k = tup[key[0]] if len(key) == 1 else tuple(tup[i] for i in key)
                d[k].remove(tup)

    def _prepare(self):
        prog = self.program
        self.base_clauses = []
        self.delta_fns: list[list] = [[] for _ in self.rels]   # relation -> [fn]
        for ci in self.stratum.clauses:
            c = prog.clauses[ci]
            rule = self.backend.rule_id(ci)
            positions = [i for i, l in enumerate(c.body) if isinstance(l, Atom) and l.relation in self.here]
            if not positions:
                self.base_clauses.append(ci)
                continue
            head_rel = self.rid[c.head.relation]
            for p in positions:
                fn = compile_clause(self.ns, c.body, c.head.args, head_rel, rule, p, live=self.here,
                                    kinds=prog.clause_kinds[ci], fanout=getattr(self.backend, "fanout", None))
                self.delta_fns[self.rid[c.body[p].relation]].append(fn)
        self.subsume_fns: list[list] = [[] for _ in self.rels]
        for si, s in enumerate(prog.subsumptions):
            if s.relation not in self.here:
                continue
            cl = s.as_clause()
            fn = compile_clause(self.ns, cl.body, (), None, -1, 0, live=self.here, distinct_from=1,
                                kinds=prog.subsumption_kinds[si])
            self.subsume_fns[self.rid[s.relation]].append(fn)
        self._build_indexes()
        for ri, fns in enumerate(self.subsume_fns):
            if len(fns) > 1:
                # one test per relation: `f1(d) or f2(d) or ...`
                ns = {f"f{i}": fn for i, fn in enumerate(fns)}
                exec("def g(d):\n    return " + " or ".join(f"f{i}(d)" for i in range(len(fns))), ns)
                self.subsume_fns[ri] = [ns["g"]]

    # ---- evaluation ----
    def run(self) -> None:
        self._prepare()
        pending: dict[int, list] = {}
        heap: list[int] = []
        rank_col = self.rank_col
        current = [None]

        def emit(ri, tup, rule):
            r = tup[rank_col[ri]]
            cur = current[0]
            if cur is not None and r < cur:
                program, ci = self.backend.rule_of(rule)
                c = program.clauses[ci]
                raise error(c.loc, f"rule for '{c.head.relation}' derived a tuple of rank {r} from tuples "
                            f"of rank {cur}: rank-ordered rules must not lower ranks")
            lst = pending.get(r)
            if lst is None:
                pending[r] = lst = []
                heapq.heappush(heap, r)
            lst.append((ri, tup, rule))

        for rel, rows, rule in self.backend.seeds(self.stratum, self.base_clauses):
            ri = self.rid[rel]
            for tup in rows:
                emit(ri, tup, rule)
        inserters = [self._inserter(ri) for ri in range(len(self.rels))]
        subsume_fns = self.subsume_fns
        delta_fns = self.delta_fns
        provenance = self.provenance
        prov = self.prov
        height = self.backend.next_height()
        waves = 0
        while heap:
            r = heapq.heappop(heap)
            wave = pending.pop(r)
            current[0] = r
            waves += 1
            height += 1
            new: dict[int, list] = {}
            for ri, tup, rule in wave:
                if inserters[ri](tup):
                    lst = new.get(ri)
                    if lst is None:
                        new[ri] = [tup]
                    else:
                        lst.append(tup)
                    if provenance:
                        prov[ri][tup] = (rule, height)
            for ri, tups in new.items():
                fns = subsume_fns[ri]
                if not fns:
                    continue
                if len(fns) == 1:
                    fn = fns[0]
                    dominated = [t for t in tups if fn((t,))]
                else:
                    dominated = [t for t in tups if any(fn((t,)) for fn in fns)]
                if dominated:
                    drop = set(dominated)
                    for t in dominated:
                        self._remove(ri, t)
                        if provenance:
                            prov[ri].pop(t, None)
                    new[ri] = [t for t in tups if t not in drop]
            for ri, tups in new.items():
                if tups:
                    for fn in delta_fns[ri]:
                        fn(tups, emit)
        self.waves = waves
        self.backend.set_height(height)
        for ri, name in enumerate(self.rels):
            self.backend.store(name, self.store[ri], self.prov[ri] if provenance else None)


def build_index(rows, key: tuple, negated: bool):
    """Index of rows: the rows themselves (no key: a scan), a dict key -> rows,
    or a set of keys (negation). A one-column key is the bare value."""
    from operator import itemgetter
    if negated:
        if not key:
            return bool(rows)
        return set(map(itemgetter(*key), rows))
    if not key:
        return rows
    get = itemgetter(*key)
    d: dict = {}
    setdefault = d.setdefault
    for r in rows:
        setdefault(get(r), []).append(r)
    return d
