"""The in-memory engine, sdylog's one evaluator: relations held in C
(native_db.py) or as Python sets, strata evaluated in C or by clauses
compiled to Python (sdylog/datalog/pyeval.py). API: load / replace / run /
read / scan / read_columns / save (a DuckDB file, the `--db` layout:
duckdb_file.py) / explain (explain.py).

Evaluation: a non-recursive stratum runs each clause once (joins in an order
chosen from the relations' sizes); a recursive stratum runs semi-naively
(each iteration joins only the tuples new in the last one); a stratum with
subsumptive rules runs in rank order (sdylog/datalog/ranked.py).

Where the relations live: when the extension sdylog.datalog._native is built
and provenance is off, every relation without a float column is a C table
(native_db.py), and a plain or recursive stratum whose clauses lower to the
C evaluator's instructions (native_plan.py) runs there. Another stratum runs
in Python on sets made from the tables (`_data`: made when first read after
the table changed) and its results go back into them; the relations read
through the API are made the same way. Without the extension, with
provenance, or with SDYLOG_NATIVE=0, every relation is a Python set.

Memory: a run asked for some relations only (`run(relations=...)`, as
`sdylog opt` asks for the write-back's) frees each other relation once no
later stratum of the run reads it, and its C hash set (which only
deduplicates rows going in) once no stratum writes it.
"""
from __future__ import annotations

from sdylog.datalog.ast import Atom, RelationDecl
from sdylog.datalog.derivation_steps import DerivationSteps, RankedBackendSteps
from sdylog.datalog.engine import DeclaredRelations, drop_plan, needed_strata
from sdylog.datalog.gc_pause import gc_paused
from sdylog.datalog.lexer import error
from sdylog.datalog.native_db import NativeDB, NativeIndexes, run_stratum
from sdylog.datalog.native_plan import native_module
from sdylog.datalog.program import Program
from sdylog.datalog.pyeval import Namespace, compile_clause
from sdylog.datalog.ranked import RankedEvaluation, StaticIndexes
from sdylog.datalog.runtime_errors import error_from_code
from sdylog.datalog.stepped import StepBackend, StepEvaluation

_PY_KIND = {"number": int, "unsigned": int, "float": float, "symbol": str}


class MemoryEngine(DerivationSteps, DeclaredRelations):
    name = "memory"

    def __init__(self, program: Program | None = None, *, provenance: bool = False):
        self.provenance = provenance
        self.program: Program | None = None
        self._decls: dict[str, RelationDecl] = {}
        native = None if provenance else native_module()
        self._db = NativeDB(native) if native is not None and hasattr(native, "Database") else None
        self._cindexes = NativeIndexes(self._db) if self._db is not None else None
        # relation -> its tuples (C relations: made from the table when first read, see _Tables)
        self._data: dict[str, set] = _Tables(self._db) if self._db is not None else {}
        self._loaded: dict[str, list] = {}     # facts loaded into a relation (kept for re-runs)
        self._prov: dict[str, dict] = {}       # relation -> tuple -> (rule id, height)
        # relations a run asked for some others only freed (see run): -> what it asked for
        self._dropped: dict[str, tuple] = {}
        # indexes, dropped when a relation changes. They read the relations
        # through the mapping itself, not through self: a reference back to
        # the engine would make a cycle that keeps the engine, and every
        # tuple it holds, alive until a full collection (at exit, at the latest)
        self._static = StaticIndexes(self._data.__getitem__)
        self._init_derivation_steps()
        self._programs: list[Program] = []
        self.iterations: dict[str, int] = {}
        if program is not None:
            self.declare(program)
            self.program = program

    # ---- schema ----
    def declare(self, program: Program) -> None:
        if any(p is program for p in self._programs):
            return   # (declared already, every relation as it is)
        for decl in program.relations.values():
            if self._declared_again(decl):
                continue
            self._decls[decl.name] = decl
            if self._db is not None:
                self._db.declare(decl)
            if not self._in_c(decl.name):
                self._data[decl.name] = set()
        if program not in self._programs:
            self._programs.append(program)

    def _declared(self, relation: str) -> RelationDecl | None:
        return self._decls.get(relation)

    @property
    def relations(self) -> list[str]:
        return list(self._decls)

    # ---- facts in ----
    def _in_c(self, relation: str) -> bool:
        return self._db is not None and self._db.holds(relation)

    def load(self, relation: str, data) -> None:
        """Add facts: lists of tuples, or anything data.to_arrow takes (columns, arrays, tables)."""
        decl = self.decl(relation)
        self._restore(relation)
        if self._in_c(relation) and isinstance(data, list) and self._db.insert(relation, data):
            # (C checked every row: the usual case skips _rows_of's checks)
            self._c_changed(relation)
            self._loaded.setdefault(relation, []).extend(data)
            return
        rows = self._rows_of(decl, data)
        self._loaded.setdefault(relation, []).extend(rows)
        if self._in_c(relation):
            self._insert_c(relation, rows)
        else:
            self._data[relation].update(rows)
            self._changed(relation)
        if self.provenance:
            p = self._prov.setdefault(relation, {})
            for r in rows:
                p.setdefault(r, (-1, 0))

    def load_file(self, relation: str, path: str, delimiter: str = "\t", display: str | None = None,
                  skip_header: bool = False) -> None:
        """Add facts from a Soufflé facts file (facts_file.read_facts_file)."""
        from sdylog.datalog.facts_file import read_facts_file
        self.load(relation, read_facts_file(self.decl(relation), path, delimiter, display, skip_header))

    def replace(self, relation: str, data) -> None:
        self.clear(relation)
        self.load(relation, data)

    def clear(self, relation: str) -> None:
        self.decl(relation)
        self._dropped.pop(relation, None)
        self._loaded.pop(relation, None)
        self._prov.pop(relation, None)
        self._reset(relation)

    def _reset(self, relation: str) -> None:
        """The relation back to its loaded facts."""
        if self._in_c(relation):
            self._db.clear(relation)
            self._insert_c(relation, self._loaded.get(relation, ()))
            return
        self._data[relation] = set(self._loaded.get(relation, ()))
        self._changed(relation)

    def _insert_c(self, relation: str, rows) -> None:
        """Rows into a C table; a value with no C form (an int beyond 64 bits)
        sends every relation back to Python for the engine's life."""
        self._c_changed(relation)
        if rows and not self._db.insert(relation, rows):
            self._leave_c()
            self._data[relation].update(rows)

    def _leave_c(self) -> None:
        data = {name: self._data[name] for name in self._decls}
        self._db = self._cindexes = None
        self._data = data
        self._static.rows = data.__getitem__
        self._static.clear()

    def _c_changed(self, relation: str) -> None:
        """A C table changed: its set (if made) and what was built on it go."""
        self._data.pop(relation, None)
        self._cindexes.forget(relation)
        self._static.forget(relation)

    def _to_c(self, relation: str) -> None:
        """A C relation's set, written by Python, into its table (the set stays valid)."""
        rows = self._data[relation]
        self._db.clear(relation)
        self._cindexes.forget(relation)
        if not self._db.insert(relation, rows):
            self._leave_c()

    def _rows_of(self, decl: RelationDecl, data):
        kinds = [_PY_KIND[k] for k in decl.kinds]
        # (the checks over every row are made by map/set, not a Python loop: ~100k facts per model)
        if isinstance(data, (list, tuple)) and all(issubclass(t, tuple) for t in set(map(type, data))):
            if set(map(len, data)) - {decl.arity}:
                r = next(r for r in data if len(r) != decl.arity)
                raise error(None, f"facts for '{decl.name}': tuple {r!r} has {len(r)} values, "
                            f"the relation has {decl.arity} columns")
            if all(type(v) is k or (k is float and type(v) is int) for r in data[:50] for v, k in zip(r, kinds)):
                if float not in kinds:
                    return data
            try:
                return [tuple(k(v) for v, k in zip(r, kinds)) for r in data]
            except (TypeError, ValueError):
                pass   # (a value of another kind: to_arrow's error names its column)
        from sdylog.datalog.data import to_arrow
        tbl = to_arrow(decl, data)
        if decl.arity == 0:
            return [()] if tbl.num_rows else []
        cols = [tbl.column(i).to_pylist() for i in range(decl.arity)]
        return list(zip(*cols))

    def _changed(self, relation: str) -> None:
        self._static.forget(relation)

    # ---- evaluation ----
    def run(self, program: Program | None = None, relations: list[str] | None = None) -> None:
        """Evaluate the program (default: the engine's). With `relations`,
        only the strata they need run, and every other relation is freed as
        soon as no later stratum reads it: afterwards only those asked for
        can be read (until the next load or run brings the others back)."""
        program = self._program_to_run(program, relations)
        strata = needed_strata(program, relations)
        for r in list(self._dropped):
            self._restore(r)
        plan = None if relations is None else drop_plan(program, strata, relations, self._decls)
        with gc_paused():
            try:
                self._run_strata(program, strata, plan)
            except Exception as e:
                located = error_from_code(e, self.rules)    # (a rule's runtime error: at the rule)
                if located is None:
                    raise
                raise located from None

    def _drop(self, relations, kept: tuple) -> None:
        """Free relations a run was not asked for (see run)."""
        for r in relations:
            self._dropped[r] = kept
            self._prov.pop(r, None)
            if self._in_c(r):
                self._db.clear(r)
                self._c_changed(r)
            else:
                self._data[r] = set()
                self._changed(r)

    def _drop_sets(self, relations, kept: tuple) -> None:
        """The C hash sets of relations no stratum of the run writes any more
        (or a rank-ordered one, which stores its result whole), that the run
        was not asked for: they deduplicate rows as they go in, and none will
        (the relations are dropped before the next run)."""
        if self._db is None:
            return
        for r in relations:
            if r not in kept and r not in self._dropped and self._in_c(r):
                self._db.drop_set(r)

    def _restore(self, relation: str) -> None:
        """A relation a run freed back to its loaded facts."""
        if self._dropped.pop(relation, None) is not None:
            self._reset(relation)
            if self.provenance:
                self._prov[relation] = {t: (-1, 0) for t in self._data[relation]}

    def _kept(self, relation: str) -> RelationDecl:
        """The relation's declaration; an error when the last run freed it."""
        decl = self.decl(relation)
        kept = self._dropped.get(relation)
        if kept is not None:
            raise error(None, f"relation '{relation}' was not kept: the run asked only for "
                        f"{', '.join(kept) or 'nothing'}")
        return decl

    def _run_strata(self, program: Program, strata, plan=None) -> None:
        if plan is not None:
            self._drop(plan.before, plan.kept)
            derived = {r for s in strata for r in s.relations}
            self._drop_sets([r for r in self._decls if r not in derived and r not in self._dropped], plan.kept)
        for s in strata:
            for r in s.relations:
                self._reset(r)
                if self.provenance:
                    self._prov[r] = {t: (-1, 0) for t in self._data[r]}
        for i, s in enumerate(strata):
            if plan is not None and s.subsumptive:
                self._drop_sets(s.relations, plan.kept)   # (its result is stored without them)
            self._run_stratum(program, s)
            if plan is not None:
                self._drop(plan.after[i], plan.kept)
                self._drop_sets(s.relations, plan.kept)

    def _run_stratum(self, program: Program, s) -> None:
        if self._db is not None and not s.subsumptive and not s.stepped:
            rounds = run_stratum(self._db, self._cindexes, program, s)
            for r in s.relations:
                self._c_changed(r)
            if rounds is not None:
                if s.recursive:
                    self.iterations.update(dict.fromkeys(s.relations, rounds))
                return
            for r in s.relations:   # (a run handed back: from the start, in Python)
                self._reset(r)
        # (what Python writes goes into the C tables: _store, _recursive)
        if s.subsumptive:
            RankedEvaluation(_Backend(self, program), program, s, self.provenance).run()
        elif s.stepped:
            StepEvaluation(_StepBackend(self, program), s.step_plan).run()
        elif s.recursive:
            self._recursive(program, s)
        else:
            self._plain(program, s)

    def _bind(self, ns: Namespace, live=frozenset(), lazy: bool = False) -> None:
        """Put the indexes compiled code reads into its namespace (with `lazy`,
        None and a loader the code calls where it first needs one)."""
        if lazy:
            def load_index(name):
                rel, key, negated = ns.specs[name]
                idx = ns.globals[name] = self.index(rel, key, negated)
                return idx
            ns.globals["_load_index"] = load_index
        for name, (rel, key, negated) in ns.specs.items():
            if name in ns.globals or rel in live:
                continue
            ns.globals[name] = None if lazy else self.index(rel, key, negated)

    def index(self, rel: str, key: tuple, negated: bool = False):
        """The index of `rel` on `key` (see ranked.build_index), built once."""
        return self._static.index(rel, key, negated)

    def index_key(self, rel: str, key: tuple) -> tuple:
        """The columns a lookup of `rel` with `key` bound uses (StaticIndexes.index_key)."""
        return self._static.index_key(rel, key)

    def _sizes(self) -> "_Sizes":
        return _Sizes(self)

    def _plain(self, program: Program, s) -> None:
        ns = Namespace()
        sizes = self._sizes()
        out: set = set()
        prov = {} if self.provenance else None
        height = self._next_height()
        fns = []
        for ci in s.clauses:
            c = program.clauses[ci]
            if any(isinstance(lit, Atom) and not self._size(lit.relation) for lit in c.body):
                continue   # an atom of an empty relation: no solution
            fns.append(compile_clause(ns, c.body, c.head.args, 0, self._rule_id(program, ci), None, sizes,
                                      kinds=program.clause_kinds[ci], lazy=True, indexes=self.index_key,
                                      add=prov is None))
        self._bind(ns, lazy=True)
        if prov is None:
            emit = out.add   # (compiled with `add`: E(tuple))
        else:
            def emit(_ri, tup, rule):
                if tup not in out:
                    out.add(tup)
                    prov[tup] = (rule, height)
        for fn in fns:
            fn(emit)
        ns.globals.clear()   # its functions and loader refer back to it: free the cycle now
        (rel,) = s.relations
        self._store(rel, out, prov)

    def _recursive(self, program: Program, s) -> None:
        here = list(s.relations)
        rid = {r: i for i, r in enumerate(here)}
        ns = Namespace()
        sizes = self._sizes()
        base, delta_fns = [], [[] for _ in here]
        for ci in s.clauses:
            c = program.clauses[ci]
            rule = self._rule_id(program, ci)
            positions = [i for i, l in enumerate(c.body) if isinstance(l, Atom) and l.relation in rid]
            head = rid[c.head.relation]
            if not positions:
                base.append(compile_clause(ns, c.body, c.head.args, head, rule, None, sizes,
                                            kinds=program.clause_kinds[ci], indexes=self.index_key))
                continue
            for p in positions:
                delta_fns[rid[c.body[p].relation]].append(
                    compile_clause(ns, c.body, c.head.args, head, rule, p, sizes, live=set(here),
                                   kinds=program.clause_kinds[ci], indexes=self.index_key))
        # live indexes of this stratum's relations, kept up to date as tuples arrive
        from operator import itemgetter
        live: list[list] = [[] for _ in here]
        g = ns.globals
        for name, (rel, key, negated) in ns.specs.items():
            if rel in rid and name not in g:
                container = {} if key else []
                live[rid[rel]].append((itemgetter(*key) if key else None, container))
                g[name] = container
        self._bind(ns, set(here))
        full = [self._data[r] for r in here]
        prov = [self._prov.setdefault(r, {}) for r in here] if self.provenance else None
        height = [self._next_height()]

        def insert(ri, tup):
            full[ri].add(tup)
            for get, c in live[ri]:
                if get is None:
                    c.append(tup)
                else:
                    k = get(tup)
                    lst = c.get(k)
                    if lst is None:
                        c[k] = [tup]
                    else:
                        lst.append(tup)

        for ri, r in enumerate(here):
            for tup in full[ri]:
                for get, c in live[ri]:
                    if get is None:
                        c.append(tup)
                    else:
                        c.setdefault(get(tup), []).append(tup)
        new: list[list] = [[] for _ in here]

        def emit(ri, tup, rule):
            if tup not in full[ri]:
                insert(ri, tup)
                new[ri].append(tup)
                if prov is not None:
                    prov[ri][tup] = (rule, height[0])

        for fn in base:
            fn(emit)
        # the first round: every tuple (facts loaded into the stratum's relations start it too)
        new = [list(f) for f in full]
        iterations = 0
        while any(new):
            iterations += 1
            delta, new[:] = list(new), [[] for _ in here]
            height[0] = self._next_height()
            for ri, tups in enumerate(delta):
                if tups:
                    for fn in delta_fns[ri]:
                        fn(tups, emit)
        for ri, r in enumerate(here):
            self._changed(r)
            self.iterations[r] = iterations
            if self._in_c(r):
                self._to_c(r)

    def _store(self, relation: str, tuples, prov) -> None:
        loaded = self._loaded.get(relation)
        if isinstance(tuples, set):
            if loaded:
                tuples.update(loaded)
            self._data[relation] = tuples
        else:
            self._data[relation] = set(tuples).union(loaded or ())
        self._changed(relation)
        if self._in_c(relation):
            self._to_c(relation)
        if self.provenance:
            p = {t: (-1, 0) for t in self._loaded.get(relation, ())}
            if prov:
                for t, v in prov.items():
                    p.setdefault(t, v)
            self._prov[relation] = p

    # ---- facts out ----
    def read(self, relation: str) -> list[tuple]:
        self._kept(relation)
        return sorted(self._data[relation])

    def scan(self, relation: str):
        """The tuples of a relation, in no particular order (no sorting: fast)."""
        self._kept(relation)
        return self._data[relation]

    def size(self, relation: str) -> int:
        self._kept(relation)
        return self._size(relation)

    def _size(self, relation: str) -> int:
        if self._in_c(relation) and relation not in self._data:
            return self._db.size(relation)
        return len(self._data[relation])

    def contains(self, relation: str, tup: tuple) -> bool:
        decl = self._kept(relation)
        if len(tup) != decl.arity:
            raise error(None, f"'{relation}' has {decl.arity} columns, the tuple has {len(tup)}")
        return tuple(tup) in self._data[relation]

    def read_columns(self, relation: str) -> dict:
        import numpy as np
        decl = self.decl(relation)
        rows = self.read(relation)
        out = {}
        for i, c in enumerate(decl.columns):
            vals = [r[i] for r in rows]
            out[c.name] = np.array(vals, dtype=object if c.kind == "symbol" else None)
        return out

    def row_matrix(self, relation: str):
        """(rows as an (n, arity) int64 array with symbols as ids, the symbol
        strings by id) for a relation held in C; None for one held in Python."""
        self._kept(relation)
        if not self._in_c(relation):
            return None
        return self._db.row_matrix(relation), self._db.symbols()

    def read_arrow(self, relation: str):
        import pyarrow as pa
        decl = self.decl(relation)
        if decl.arity == 0:
            return pa.table({"u": pa.array([True] * min(self.size(relation), 1))})
        rows = self.read(relation)
        return pa.table({c.name: [r[i] for r in rows] for i, c in enumerate(decl.columns)})

    def save(self, path: str) -> None:
        """Every relation into a new DuckDB file at `path` (as `run --db` writes them)."""
        from sdylog.datalog.duckdb_file import save
        save(path, self)

    def explain(self, relation: str, values: tuple, max_depth: int = 100):
        """The derivation tree of a tuple (needs provenance=True)."""
        from sdylog.datalog.explain import explain
        return explain(self, relation, values, max_depth)

    def close(self) -> None:
        self._data.clear()
        self._static.clear()
        self._db = self._cindexes = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Sizes:
    """Relation -> tuple count, read when the planner asks (a dict of every
    relation's size per stratum cost more than the lookups)."""

    def __init__(self, engine: MemoryEngine):
        self.engine = engine

    def get(self, relation: str, default=None):
        return self.engine._size(relation) if relation in self.engine._decls else default


class _Tables(dict):
    """Relation -> its tuples as a Python set; a relation held in C is made
    from its table when first read (and dropped when the table changes)."""

    def __init__(self, db: NativeDB):
        super().__init__()
        self.db = db

    def __missing__(self, relation: str) -> set:
        rows = self[relation] = self.db.rows(relation)
        return rows


class _Backend(RankedBackendSteps):
    """What a rank-ordered stratum reads and writes in the memory engine."""

    def rows(self, relation: str):
        return list(self.engine._data[relation])

    @property
    def static(self) -> StaticIndexes:
        """The engine's indexes of the relations below the stratum."""
        return self.engine._static

    @property
    def native_db(self) -> NativeDB | None:
        """The engine's C tables (the C evaluation reads and writes them)."""
        return self.engine._db

    @property
    def native_static(self) -> NativeIndexes | None:
        """Planning answers from the C tables."""
        return self.engine._cindexes

    def stored_in_c(self, relation: str) -> None:
        """The C evaluation wrote the relation's table."""
        self.engine._c_changed(relation)

    def seeds(self, stratum, base_clauses):
        eng = self.engine
        for name in stratum.relations:
            if eng._loaded.get(name):
                yield name, list(eng._loaded[name]), -1
        ns = Namespace()
        sizes = eng._sizes()
        fns = []
        for ci in base_clauses:
            c = self.program.clauses[ci]
            fns.append((c.head.relation, self.rule_id(ci),
                        compile_clause(ns, c.body, c.head.args, 0, self.rule_id(ci), None, sizes,
                                       kinds=self.program.clause_kinds[ci])))
        eng._bind(ns)
        for rel, rule, fn in fns:
            out = []
            fn(lambda _ri, tup, _rule: out.append(tup))
            yield rel, out, rule

    def store(self, relation: str, tuples, prov) -> None:
        self.engine._store(relation, tuples, prov)


class _StepBackend(StepBackend):
    """What a stepped stratum (sdylog/datalog/stepped.py) asks of the memory
    engine: its strata of one step run as any others (in C where they lower)."""

    def run_strata(self, program: Program) -> None:
        self.engine._run_strata(program, program.strata)

    def loaded(self, relation: str):
        return self.engine._loaded.get(relation, ())

    def replace(self, relation: str, rows) -> None:
        self.engine.replace(relation, rows)

    def take(self, relation: str, aux: str, program: Program, origin: dict) -> list:
        eng = self.engine
        if eng.provenance:
            self.keep_provenance(relation, origin,
                                 ((t, rule, height) for t, (rule, height) in eng._prov.get(aux, {}).items()))
        return list(eng._data[aux])

    def store(self, relation: str, rows) -> None:
        self.engine._store(relation, set(rows), self.prov.get(relation))
