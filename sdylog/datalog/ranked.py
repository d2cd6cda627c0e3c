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
import re
from collections import defaultdict

from sdylog.datalog.ast import (Aggregate, Atom, BoolLit, Comparison, Functor, Negation, NumberLit,
                                StringLit, Var, Wildcard)
from sdylog.datalog.lexer import error
from sdylog.datalog.sql import column_list

RANK_TYPE = "Rank"


def rank_column(decl) -> int:
    cols = [i for i, c in enumerate(decl.columns) if c.type_name == RANK_TYPE]
    if len(cols) != 1:
        raise error(decl.loc, f"relation '{decl.name}' is evaluated in rank order (its stratum has "
                    f"subsumptive rules) and needs exactly one column of type {RANK_TYPE}")
    return cols[0]


# ---------------------------------------------------------------- runtime helpers
def _div(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    if b == 0:
        raise error(None, "division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _mod(a, b):
    if isinstance(a, float) or isinstance(b, float):
        import math
        return math.fmod(a, b)
    if b == 0:
        raise error(None, "division by zero")
    return a - b * _div(a, b)


def _substr(s, i, n):
    if i < 0 or i > len(s):
        return ""
    return s[i:i + max(n, 0)]


def _match(pattern, s):
    return re.fullmatch(pattern, s) is not None


_HELPERS = {"_div": _div, "_mod": _mod, "_substr": _substr, "_match": _match}

_BINARY = {"+": "({} + {})", "-": "({} - {})", "*": "({} * {})", "/": "_div({}, {})", "%": "_mod({}, {})",
           "^": "({} ** {})", "band": "({} & {})", "bor": "({} | {})", "bxor": "({} ^ {})",
           "bshl": "({} << {})", "bshr": "({} >> {})", "land": "int(bool({}) and bool({}))",
           "lor": "int(bool({}) or bool({}))", "lxor": "int(bool({}) != bool({}))"}
_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Unsupported(Exception):
    pass


# ---------------------------------------------------------------- compilation
class _ClauseCompiler:
    """Python source for one clause, one of its atoms reading the delta."""

    def __init__(self, ev: "RankedEvaluation", body, head_exprs, delta_pos: int | None,
                 head_rel: int | None, rule: int, distinct_from_delta: int | None = None):
        self.ev = ev
        self.body = list(body)
        self.head_exprs = head_exprs
        self.delta_pos = delta_pos
        self.head_rel = head_rel
        self.rule = rule
        self.distinct_from_delta = distinct_from_delta   # body index whose tuple must differ from the delta's
        self.lines: list[str] = []
        self.bound: set[str] = set()
        self.depth = 1
        self.tmp = 0

    def emit_line(self, text: str):
        self.lines.append("    " * self.depth + text)

    def var(self, name: str) -> str:
        return f"v_{name}"

    def expr(self, e) -> str:
        if isinstance(e, Var):
            if e.name not in self.bound:
                raise _Unsupported(f"variable {e.name} used before bound")
            return self.var(e.name)
        if isinstance(e, NumberLit):
            return repr(e.value)
        if isinstance(e, StringLit):
            return repr(e.value)
        if isinstance(e, Functor):
            args = [self.expr(a) for a in e.args]
            op = e.op
            if op in _BINARY:
                return _BINARY[op].format(*args)
            if op == "neg":
                return f"(-{args[0]})"
            if op == "bnot":
                return f"(~{args[0]})"
            if op == "lnot":
                return f"int(not {args[0]})"
            if op in ("min", "max"):
                return f"{op}({', '.join(args)})"
            if op == "cat":
                return "(" + " + ".join(args) + ")"
            if op == "strlen":
                return f"len({args[0]})"
            if op == "substr":
                return f"_substr({args[0]}, {args[1]}, {args[2]})"
            if op == "to_string":
                return f"str({args[0]})"
            if op == "to_number":
                return f"int({args[0]})"
            if op == "to_float":
                return f"float({args[0]})"
            if op == "to_unsigned":
                return f"int({args[0]})"
            raise _Unsupported(f"functor {op}")
        if isinstance(e, Aggregate):
            raise _Unsupported("aggregates in a rank-ordered stratum")
        raise _Unsupported(f"expression {e!r}")

    def can_compute(self, e) -> bool:
        if isinstance(e, Var):
            return e.name in self.bound
        if isinstance(e, (NumberLit, StringLit)):
            return True
        if isinstance(e, Functor):
            return all(self.can_compute(a) for a in e.args)
        return False

    # ---- literals ----
    def atom_step(self, idx: int, atom: Atom):
        """Loop over the tuples of `atom` matching what is bound."""
        ev = self.ev
        rel = atom.relation
        key_pos, key_exprs = [], []
        for i, a in enumerate(atom.args):
            if isinstance(a, Wildcard):
                continue
            if isinstance(a, Var) and a.name not in self.bound:
                continue
            if self.can_compute(a):
                key_pos.append(i)
                key_exprs.append(self.expr(a))
        t = f"t{idx}"
        if idx == self.delta_pos:
            self.emit_line(f"for {t} in delta:")
            key_pos, key_exprs = [], []   # checked below like the rest
            self.depth += 1
            checks_from = [i for i, a in enumerate(atom.args)]
        else:
            source = ev.index_name(rel, tuple(key_pos))
            if key_pos:
                key = key_exprs[0] if len(key_pos) == 1 else "(" + ", ".join(key_exprs) + ",)"
                self.emit_line(f"for {t} in {source}.get({key}, ()):")
            else:
                self.emit_line(f"for {t} in {source}:")
            self.depth += 1
            checks_from = [i for i in range(len(atom.args)) if i not in key_pos]
        if self.distinct_from_delta == idx:
            self.emit_line(f"if {t} == t{self.delta_pos}: continue")
        conds = []
        for i in checks_from:
            a = atom.args[i]
            if isinstance(a, Wildcard):
                continue
            if isinstance(a, Var) and a.name not in self.bound:
                self.emit_line(f"{self.var(a.name)} = {t}[{i}]")
                self.bound.add(a.name)
                continue
            conds.append(f"{t}[{i}] != {self.expr(a)}")
        if conds:
            self.emit_line(f"if {' or '.join(conds)}: continue")

    def negation_step(self, neg: Negation):
        atom = neg.atom
        pos = [i for i, a in enumerate(atom.args) if not isinstance(a, Wildcard)]
        exprs = [self.expr(atom.args[i]) for i in pos]
        name = self.ev.index_name(atom.relation, tuple(pos), negated=True)
        if not pos:
            self.emit_line(f"if {name}: continue")
            return
        key = exprs[0] if len(pos) == 1 else "(" + ", ".join(exprs) + ",)"
        self.emit_line(f"if {key} in {name}: continue")

    def comparison_step(self, c: Comparison):
        if c.op in ("match", "contains"):
            a, b = self.expr(c.left), self.expr(c.right)
            test = f"_match({a}, {b})" if c.op == "match" else f"({a} in {b})"
            self.emit_line(f"if {'' if c.negated else 'not '}{test}: continue")
            return
        self.emit_line(f"if not ({self.expr(c.left)} {_COMPARE[c.op]} {self.expr(c.right)}): continue")

    def assignment(self, c: Comparison):
        """`x = expr` with x unbound: binds x. Returns False if not an assignment now."""
        if c.op != "=":
            return False
        for a, b in ((c.left, c.right), (c.right, c.left)):
            if isinstance(a, Var) and a.name not in self.bound and self.can_compute(b):
                self.emit_line(f"{self.var(a.name)} = {self.expr(b)}")
                self.bound.add(a.name)
                return True
        return False

    def ready(self, lit) -> bool:
        if isinstance(lit, Negation):
            return all(self.can_compute(a) for a in lit.atom.args if not isinstance(a, Wildcard))
        if isinstance(lit, Comparison):
            return self.can_compute(lit.left) and self.can_compute(lit.right)
        return False

    def compile(self) -> str:
        todo = list(enumerate(self.body))
        if self.delta_pos is not None:
            todo = [(i, l) for i, l in todo if i != self.delta_pos]
            self.atom_step(self.delta_pos, self.body[self.delta_pos])
        while todo:
            progress = False
            for k, (i, lit) in enumerate(todo):
                if isinstance(lit, BoolLit):
                    if not lit.value:
                        self.emit_line("continue")
                    todo.pop(k)
                    progress = True
                    break
                if isinstance(lit, Comparison) and self.assignment(lit):
                    todo.pop(k)
                    progress = True
                    break
                if self.ready(lit):
                    if isinstance(lit, Negation):
                        self.negation_step(lit)
                    else:
                        self.comparison_step(lit)
                    todo.pop(k)
                    progress = True
                    break
            if progress:
                continue
            atoms = [(i, l) for i, l in todo if isinstance(l, Atom)]
            if not atoms:
                raise _Unsupported("no literal can be evaluated next")

            def score(item):
                i, a = item
                bound = sum(1 for x in a.args if not isinstance(x, Wildcard) and self.can_compute(x))
                static = a.relation not in self.ev.here
                return (bound, static, -len(a.args))
            i, a = max(atoms, key=score)
            todo.remove((i, a))
            self.atom_step(i, a)
        if self.head_rel is None:
            self.emit_line("return True")
        else:
            head = "(" + ", ".join(self.expr(e) for e in self.head_exprs) + ",)"
            self.emit_line(f"E({self.head_rel}, {head}, {self.rule})")
        params = "delta, E" if self.head_rel is not None else "delta"
        return f"def f({params}):\n" + "\n".join(self.lines) + ("\n    return False\n" if self.head_rel is None else "\n")


class RankedEvaluation:
    """One evaluation of one subsumptive stratum (see the module docstring)."""

    def __init__(self, engine, program, stratum):
        self.engine = engine
        self.program = program
        self.stratum = stratum
        self.rels = list(stratum.relations)
        self.here = set(self.rels)
        self.rid = {r: i for i, r in enumerate(self.rels)}
        self.rank_col = [rank_column(program.relations[r]) for r in self.rels]
        self.namespace: dict = dict(_HELPERS)
        self._index_specs: dict[str, tuple] = {}     # name -> (relation, key positions, negated)
        self.store = [set() for _ in self.rels]
        # relation -> [(key positions, dict)]: indexes kept up to date on insert
        self.live_indexes: list[list] = [[] for _ in self.rels]
        self.provenance = engine.provenance
        self.prov: list[dict] = [{} for _ in self.rels]
        self.height = 0
        self.waves = 0

    # ---- indexes ----
    def index_name(self, rel: str, key: tuple, negated: bool = False) -> str:
        name = f"{'N' if negated else 'I'}_{rel}_{'_'.join(map(str, key)) or 'all'}"
        self._index_specs[name] = (rel, key, negated)
        return name

    def _build_indexes(self):
        static_rows: dict[str, list] = {}
        for name, (rel, key, negated) in self._index_specs.items():
            if rel in self.here:
                if negated:
                    raise error(None, f"internal: negation of '{rel}' inside its own stratum")
                ri = self.rid[rel]
                if not key:
                    self.namespace[name] = self._all_view(ri)
                    continue
                d: dict = {}
                self.live_indexes[ri].append((key, d))
                self.namespace[name] = d
                continue
            if rel not in static_rows:
                static_rows[rel] = self._read_static(rel)
            rows = static_rows[rel]
            if negated:
                if not key:
                    self.namespace[name] = bool(rows)
                elif len(key) == 1:
                    k0 = key[0]
                    self.namespace[name] = {r[k0] for r in rows}
                else:
                    self.namespace[name] = {tuple(r[k] for k in key) for r in rows}
            elif not key:
                self.namespace[name] = rows
            else:
                d = defaultdict(list)
                if len(key) == 1:
                    k0 = key[0]
                    for r in rows:
                        d[r[k0]].append(r)
                else:
                    for r in rows:
                        d[tuple(r[k] for k in key)].append(r)
                self.namespace[name] = dict(d)

    def _all_view(self, ri: int):
        for k, d in self.live_indexes[ri]:
            if k is None:
                return d
        lst: list = []
        self.live_indexes[ri].append((None, lst))
        return lst

    def _read_static(self, rel: str) -> list:
        decl = self.program.relations[rel]
        if decl.arity == 0:
            return [()] if self.engine.size(rel) else []
        cols = column_list(decl.arity)
        return self.engine.con.execute(f"SELECT {cols} FROM {self.engine.table(rel)}").fetchall()

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

    # ---- compilation ----
    def _compile(self, body, head_exprs, delta_pos, head_rel, rule, distinct=None):
        comp = _ClauseCompiler(self, body, head_exprs, delta_pos, head_rel, rule, distinct)
        try:
            src = comp.compile()
        except _Unsupported as e:
            raise error(body[0].loc if body else None, f"cannot evaluate this rule in rank order: {e}") from None
        ns = self.namespace
        local: dict = {}
        exec(compile(src, f"<ranked rule {rule}>", "exec"), ns, local)
        return local["f"]

    def _prepare(self):
        prog = self.program
        self.base_clauses = []
        self.delta_fns: list[list] = [[] for _ in self.rels]   # relation -> [fn]
        for ci in self.stratum.clauses:
            c = prog.clauses[ci]
            rule = self.engine._rule_id(prog, ci)
            positions = [i for i, l in enumerate(c.body) if isinstance(l, Atom) and l.relation in self.here]
            if not positions:
                self.base_clauses.append(ci)
                continue
            head_rel = self.rid[c.head.relation]
            for p in positions:
                fn = self._compile(c.body, c.head.args, p, head_rel, rule)
                self.delta_fns[self.rid[c.body[p].relation]].append(fn)
        self.subsume_fns: list[list] = [[] for _ in self.rels]
        for si in range(len(prog.subsumptions)):
            s = prog.subsumptions[si]
            if s.relation not in self.here:
                continue
            cl = s.as_clause()
            fn = self._compile(cl.body, (), 0, None, -1, distinct=1)
            self.subsume_fns[self.rid[s.relation]].append(fn)
        self._build_indexes()

    # ---- evaluation ----
    def run(self) -> None:
        self._prepare()
        pending: dict[int, list] = {}
        heap: list[int] = []
        rank_col = self.rank_col
        current = [None]
        clause_of_rule = {}

        def emit(ri, tup, rule):
            r = tup[rank_col[ri]]
            cur = current[0]
            if cur is not None and r < cur:
                program, ci = self.engine.rules[rule]
                c = program.clauses[ci]
                raise error(c.loc, f"rule for '{c.head.relation}' derived a tuple of rank {r} from tuples "
                            f"of rank {cur}: rank-ordered rules must not lower ranks")
            lst = pending.get(r)
            if lst is None:
                pending[r] = lst = []
                heapq.heappush(heap, r)
            lst.append((ri, tup, rule))

        for ri, rows, rule in self._seeds():
            for tup in rows:
                emit(ri, tup, rule)
        inserters = [self._inserter(ri) for ri in range(len(self.rels))]
        subsume_fns = self.subsume_fns
        delta_fns = self.delta_fns
        provenance = self.provenance
        prov = self.prov
        height = self.engine._next_height()
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
                dominated = [t for t in tups if any(fn([t]) for fn in fns)]
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
        self.engine._height = max(self.engine._height, height)
        self._write_back()

    def _seeds(self):
        """(relation index, tuples, rule id) of the clauses that read no relation
        of this stratum, and of facts loaded into its relations."""
        eng = self.engine
        for name in self.rels:
            rel = eng.stored(name)
            if rel.edb_table:
                cols = column_list(rel.decl.arity)
                yield self.rid[name], eng.con.execute(f"SELECT {cols} FROM {rel.edb_table}").fetchall(), -1
        for ci in self.base_clauses:
            c = self.program.clauses[ci]
            parts = eng._clause_parts(self.program, [ci])
            rows = eng.con.execute(parts[0]).fetchall()
            yield self.rid[c.head.relation], rows, eng._rule_id(self.program, ci)

    def _write_back(self) -> None:
        from sdylog.datalog.data import to_arrow
        eng = self.engine
        for ri, name in enumerate(self.rels):
            rel = eng.stored(name)
            rows = list(self.store[ri])
            eng.con.execute(f"DELETE FROM {rel.table}")
            if not rows:
                continue
            tbl = to_arrow(rel.decl, rows)
            if self.provenance:
                import pyarrow as pa
                info = [self.prov[ri].get(t, (-1, 0)) for t in rows]
                tbl = tbl.append_column("_rule", pa.array([i[0] for i in info], pa.int32()))
                tbl = tbl.append_column("_height", pa.array([i[1] for i in info], pa.int32()))
            eng.con.register("__sdylog_ranked", tbl)
            try:
                eng.con.execute(f"INSERT INTO {rel.table} SELECT * FROM __sdylog_ranked")
            finally:
                eng.con.unregister("__sdylog_ranked")
