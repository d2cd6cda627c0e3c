"""The in-memory engine, sdylog's one evaluator: relations held in C
(native_db.py) or as Python sets, strata evaluated in C or by clauses
compiled to Python (sdylog/datalog/pyeval.py). API: load / load_all /
replace / run / read / scan / read_columns / save (a DuckDB file, the
`--db` layout: duckdb_file.py) / explain (explain.py).

Evaluation: a non-recursive stratum runs each clause once; a recursive
stratum runs semi-naively (each iteration joins only the tuples new in the
last one); a stratum with subsumptive rules runs in rank order (ranked.py).
Every clause is planned by plan.py (joins in an order chosen from the
relations' sizes), the plans kept per program.

Where the relations live: when the extension sdylog.datalog._native is built
and provenance is off, every relation without a float column is a C table
(native_db.py), and a stratum whose clauses lower to the C evaluator's
instructions (native_plan.py) runs there (plain, recursive, rank-ordered
or stepped), consecutive ones in one call while their kept plans fit the
sizes: a whole run in one, warm. Another stratum runs
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

from dataclasses import dataclass

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.engine import derived_by, drop_plan, needed_strata, strata_since, written_by
from sdylog.datalog.gc_pause import gc_paused
from sdylog.datalog.lexer import error
from sdylog.datalog.named_rows import NamedReads, positions
from sdylog.datalog.native_db import NativeDB, NativeIndexes, TableLayout, frees, run_strata
from sdylog.datalog.native_plan import native_module
from sdylog.datalog.program import Program
from sdylog.datalog.plan import Context, StratumPlan, plan_stratum, plans_of
from sdylog.datalog.pyeval import Namespace, clause_function, delta_function
from sdylog.datalog.ranked import RankedEvaluation, StaticIndexes
from sdylog.datalog.runtime_errors import error_from_code
from sdylog.datalog.stepped import StepEvaluation

_PY_KIND = {"number": int, "unsigned": int, "float": float, "symbol": str}


@dataclass(frozen=True)
class Schema:
    """What every engine running a program holds for it, worked out once per
    program (kept in its run_cache): the declarations of its relations and
    of the auxiliary ones of its stepped strata, the programs they cover (it
    and its step programs, which a stepped stratum's run declares), and
    their C tables."""
    decls: dict
    programs: tuple
    tables: TableLayout   # (saved with the program, cache.py: its plans bound for C too)


def schema_of(program: Program) -> Schema:
    cache = program.run_cache
    if cache.get("schema") is None:
        programs = [program]
        for s in program.strata:
            if s.stepped:
                programs += [p for p in (s.step_plan.seeds, s.step_plan.step) if p is not None]
        decls = {}
        for p in programs:
            for decl in p.relations.values():
                decls.setdefault(decl.name, decl)
        cache["schema"] = Schema(decls, tuple(programs), TableLayout(decls, tuple(programs)))
    return cache["schema"]


def merged_facts(relations, *sources: dict) -> dict:
    """The facts of several sources (relation -> list of rows) as one dict
    for load_all: only the non-empty ones of `relations`, the rows of a
    relation that several sources give one after the other."""
    merged: dict = {}
    for source in sources:
        for name, rows in source.items():
            if name in relations and rows:
                merged[name] = [*merged[name], *rows] if name in merged else rows
    return merged


def _looked_up(relations):
    """`relations` as a set to look names up in (itself when it is one)."""
    return relations if isinstance(relations, (set, frozenset)) else set(relations)


class MemoryEngine(NamedReads):
    name = "memory"

    def __init__(self, program: Program | None = None, *, provenance: bool = False):
        self.provenance = provenance
        self.program: Program | None = None
        # (the program's relations are held from the start, as its Schema says: a
        # run costs no work per relation declared)
        schema = schema_of(program) if program is not None else Schema({}, (), TableLayout({}))
        self._decls: dict[str, RelationDecl] = dict(schema.decls)
        self._programs: list[Program] = list(schema.programs)
        native = None if provenance else native_module()
        self._db = NativeDB(native, schema.tables) if native is not None and hasattr(native, "Database") else None
        self._cindexes = NativeIndexes(self._db) if self._db is not None else None
        # relation -> its tuples (C relations: made from the table when first read, see _Tables)
        self._data: dict[str, set] = _Tables(self._db) if self._db is not None else {}
        # the relations held as Python sets (every one without the C extension)
        self._in_python = set(schema.tables.in_python if self._db is not None else self._decls)
        for r in self._in_python:
            self._data[r] = set()
        self._written: set[str] = set()     # C tables rows went into since they were last emptied
        self._loaded: dict[str, list] = {}     # facts loaded into a relation (kept for re-runs)
        self._prov: dict[str, dict] = {}       # relation -> tuple -> (rule id, height)
        # relations the last run, asked for some others only, freed (see run), and what it asked for
        self._dropped: frozenset[str] = frozenset()
        self._asked: tuple[str, ...] = ()
        # indexes, dropped when a relation changes. They read the relations
        # through the mapping itself, not through self: a reference back to
        # the engine would make a cycle that keeps the engine, and every
        # tuple it holds, alive until a full collection (at exit, at the latest)
        self._static = StaticIndexes(self._data.__getitem__)
        # What provenance numbers: the rules (a (program, clause index) pair
        # gets a rule id when it first derives something) and the evaluation
        # steps (heights: a tuple's premises were all derived at smaller heights)
        self._height = 0
        self._rule_ids: dict[tuple[int, int], int] = {}   # (id(program), clause index) -> rule id
        self.rules: list[tuple[Program, int]] = []       # rule id -> (program, clause index)
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
                self._in_python.add(decl.name)
                self._data[decl.name] = set()
        self._programs.append(program)

    def _declared_again(self, decl: RelationDecl) -> bool:
        """Whether DECL's relation is already held (an error if with other column types)."""
        have = self._decls.get(decl.name)
        if have is None:
            return False
        if have.kinds != decl.kinds:
            raise error(decl.loc, f"relation '{decl.name}' is declared with column types "
                        f"({', '.join(decl.kinds)}) but the database holds it with "
                        f"({', '.join(have.kinds)})")
        return True

    def decl(self, relation: str) -> RelationDecl:
        d = self._decls.get(relation)
        if d is None:
            raise error(None, f"unknown relation '{relation}'")
        return d

    @property
    def relations(self) -> list[str]:
        return list(self._decls)

    # ---- provenance: rule ids and heights ----
    def _rule_id(self, program: Program, ci: int) -> int:
        key = (id(program), ci)
        rid = self._rule_ids.get(key)
        if rid is None:
            rid = self._rule_ids[key] = len(self.rules)
            self.rules.append((program, ci))
        return rid

    def _next_height(self) -> int:
        self._height += 1
        return self._height

    # ---- facts in ----
    def _in_c(self, relation: str) -> bool:
        return self._db is not None and self._db.holds(relation)

    def load(self, relation: str, data) -> None:
        """Add facts: lists of tuples, or anything data.to_arrow takes (columns, arrays, tables)."""
        self.load_all({relation: data})

    def load_all(self, facts: dict) -> None:
        """Add the facts of several relations at once (relation -> what load
        takes): what changed is noted once, not per relation (a run loads
        about a hundred)."""
        for relation in facts:
            self.decl(relation)
        self._restore(list(facts))
        checked = {}   # (relations whose rows Python checks and converts)
        inserted = []
        try:
            for relation, data in facts.items():
                # (C checks every row as it goes in: the usual case skips _rows_of's checks)
                if self._in_c(relation) and isinstance(data, list) and self._db.insert(relation, data):
                    inserted.append(relation)
                    self._loaded.setdefault(relation, []).extend(data)
                else:
                    checked[relation] = data
        finally:   # (a later relation's rows may raise: those already in C are noted all the same)
            if inserted:
                self._c_changed(inserted)
        for relation, data in checked.items():
            self._load_checked(self._decls[relation], data)

    def _load_checked(self, decl: RelationDecl, data) -> None:
        relation = decl.name
        rows = self._rows_of(decl, data)
        self._loaded.setdefault(relation, []).extend(rows)
        if self._in_c(relation):
            self._insert_c(relation, rows)
        else:
            self._data[relation].update(rows)
            self._changed((relation,))
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
        self._replace({relation: ()})

    def _replace(self, facts: dict) -> None:
        """The facts of each relation of `facts` (relation -> a list of
        tuples) replaced by its rows, at once."""
        self._dropped = self._dropped.difference(facts)
        for held in (self._loaded, self._prov):
            for r in held.keys() & facts.keys():
                del held[r]
        self._reset(facts)
        self.load_all({r: rows for r, rows in facts.items() if rows})

    def _reset(self, relations) -> None:
        """The relations back to their loaded facts."""
        self._empty(relations)
        # (the relations loaded are a few dozen, those reset often hundreds: the
        # loaded ones are looked up in the others, not the other way round)
        relations = _looked_up(relations)
        for r in [r for r in self._loaded if r in relations]:
            if self._in_c(r):
                self._insert_c(r, self._loaded[r])
            else:
                self._data[r].update(self._loaded[r])

    def _empty(self, relations, cleared: bool = False) -> None:
        """The relations emptied (the C tables holding rows in one call;
        `cleared`: C emptied them already, only what Python built on them goes)."""
        if self._db is not None:
            written = self._written.intersection(relations)
            self._written -= written
            if cleared:
                self._forget_c(relations)
            elif written:
                self._db.clear(written)
                self._forget_c(written)
        python = self._in_python.intersection(relations)
        if python:
            for r in python:
                self._data[r] = set()
            self._changed(python)

    def _insert_c(self, relation: str, rows) -> None:
        """Rows into a C table; a value with no C form (an int beyond 64 bits)
        sends every relation back to Python for the engine's life."""
        if not rows:
            return
        self._c_changed((relation,))
        if not self._db.insert(relation, rows):
            self._leave_c()
            self._data[relation].update(rows)

    def _leave_c(self) -> None:
        data = {name: self._data[name] for name in self._decls}
        self._db = self._cindexes = None
        self._data = data
        self._in_python = set(self._decls)
        self._static.rows = data.__getitem__
        self._static.clear()

    def _c_changed(self, relations) -> None:
        """Rows went into C tables (a load, a run of C)."""
        self._written.update(relations)
        self._forget_c(relations)

    def _forget_c(self, relations) -> None:
        """C tables changed: their sets (if made) and what was built on them go."""
        # (sets made from tables: a few, against the hundreds of relations a run changes)
        relations = _looked_up(relations)
        for r in [r for r in self._data if r in relations and r not in self._in_python]:
            del self._data[r]
        self._cindexes.forget_all(relations)
        self._static.forget_all(relations)

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

    def _changed(self, relations) -> None:
        self._static.forget_all(relations)

    # ---- evaluation ----
    def run(self, program: Program | None = None, relations: list[str] | None = None, keep: bool = False,
            since=None) -> None:
        """Evaluate the program (default: the engine's). With `relations`,
        only the strata they need run, and every other relation is freed as
        soon as no later stratum reads it: afterwards only those asked for
        can be read (until the next load or run brings the others back);
        with `keep`, nothing is freed. `since`: the input relations replaced
        since a run of the program that kept everything: only the strata
        that depend on them run again (strata_since), nothing freed."""
        program = program or self.program
        if program is None:
            raise error(None, "no program to run")
        self.declare(program)
        strata = needed_strata(program, relations) if since is None else strata_since(program, relations, since)
        self._restore(self._dropped)
        plan = None if relations is None or keep or since is not None else drop_plan(program, relations, self._decls)
        derived = plan.derived if plan is not None else derived_by(program, relations, since)
        with gc_paused():
            try:
                self._run_strata(program, strata, plan, derived)
            except Exception as e:
                located = error_from_code(e, self.rules)    # (a rule's runtime error: at the rule)
                if located is None:
                    raise
                raise located from None

    def _drop(self, relations: frozenset, kept: tuple, emptied: bool = False) -> None:
        """Free relations a run was not asked for (see run); `emptied`: C
        emptied their tables already (as run_strata's `frees` said), unless
        the engine left C since (_leave_c: they are Python's now)."""
        if not relations:
            return
        # (a fresh engine's first drop: the plan's own frozenset, not a copy)
        self._dropped = self._dropped | relations if self._dropped else relations
        self._asked = kept
        if self._prov:
            for r in relations:
                self._prov.pop(r, None)
        self._empty(relations, cleared=emptied)

    def _drop_sets(self, relations: frozenset) -> None:
        """The C hash sets of relations (drop_plan's: not asked for) no
        stratum of the run writes any more (or a rank-ordered one, which
        stores its result whole): they deduplicate rows as they go in, and
        none will (the relations are dropped before the next run)."""
        if self._db is not None and relations:
            self._db.drop_sets(relations - self._dropped)

    def _restore(self, relations) -> None:
        """Relations a run freed back to their loaded facts."""
        if not self._dropped:
            return
        freed = self._dropped.intersection(relations)
        if not freed:
            return
        self._dropped -= freed
        self._reset(freed)
        self._facts_provenance(freed)

    def _facts_provenance(self, relations) -> None:
        """With provenance, the relations' tuples (their loaded facts, after
        _reset) recorded as facts: no rule, height 0."""
        if self.provenance:
            for r in relations:
                self._prov[r] = {t: (-1, 0) for t in self._data[r]}

    def _kept(self, relation: str) -> RelationDecl:
        """The relation's declaration; an error when the last run freed it."""
        decl = self.decl(relation)
        if relation in self._dropped:
            raise error(None, f"relation '{relation}' was not kept: the run asked only for "
                        f"{', '.join(self._asked) or 'nothing'}")
        return decl

    def _run_strata(self, program: Program, strata, plan=None, derived=None) -> None:
        """Evaluate the strata; `derived`: the relations they derive, when known (derived_by)."""
        if plan is not None:
            self._drop_sets(plan.unset_first)   # (first: none is dropped yet, none to leave out)
            self._drop(plan.freed_before, plan.kept)
        if derived is None:
            derived = plan.derived if plan is not None else frozenset(written_by(strata))
        self._reset(derived)
        self._facts_provenance(derived)
        # (C frees what no later stratum reads as it goes: the same as _drop below, done sooner)
        freed = frees(self._db, plan) if plan is not None and self._db is not None else None
        i = 0
        while i < len(strata):
            in_c, ran = self._run_next(program, strata[i:], None if freed is None else freed[i:])
            if plan is not None:
                # (C freed what `freed` says after each stratum it evaluated)
                self._drop(plan.freed_after(i, i + in_c), plan.kept, emptied=True)
                self._drop(plan.freed_after(i + in_c, i + ran), plan.kept)
                self._drop_sets(plan.sets_after(i + in_c, i + ran))
            i += ran

    def _run_next(self, program: Program, strata, freed=None) -> tuple[int, int]:
        """Evaluate the first of `strata`, and those after it that C
        evaluates in the same call (native_db.run_strata, freeing `freed`):
        how many C evaluated, and how many were evaluated."""
        rounds, aborted = run_strata(self._db, self._cindexes, program, strata, self._c_changed, freed) if (
            self._db is not None) else ([], False)
        if rounds and not aborted:
            return len(rounds), len(rounds)
        s = strata[len(rounds)]
        if self._db is not None and not s.subsumptive and not s.stepped:
            self._reset(s.relations)   # (a run handed back, or none: from the start, in Python)
        # (what Python writes goes into the C tables: _store, _semi_naive)
        if s.subsumptive:
            RankedEvaluation(self, program, s).run()
        elif s.stepped:
            StepEvaluation(self, program, s.step_plan).run()
        else:
            self._semi_naive(program, s)
        return len(rounds), len(rounds) + 1

    def _bind(self, ns: Namespace) -> None:
        """Put the indexes compiled code reads into its namespace (but those
        it holds already: Namespace.live_indexes)."""
        for name, (rel, key, negated) in ns.specs.items():
            if name not in ns.globals:
                ns.globals[name] = self._static.index(rel, key, negated)

    def _size_of(self, relation: str) -> int | None:
        """A relation's tuple count (what planning reads), None when not declared."""
        return self._size(relation) if relation in self._decls else None

    def _plans(self, program: Program, s) -> StratumPlan:
        """The stratum's plans (kept per program, plan.PlanCache)."""
        return plans_of(program).get(("py", s.relations), self._size_of,
                                     lambda sizes: plan_stratum(program, s, Context(sizes, index_key=self._static.index_key)))

    def _semi_naive(self, program: Program, s) -> None:
        """A plain or recursive stratum in Python: its clauses that read none
        of its relations once, then those that do on the tuples new in the
        last round until none is (a plain stratum has none of those)."""
        here = list(s.relations)
        rid = {r: i for i, r in enumerate(here)}
        ns = Namespace()
        plans = self._plans(program, s)

        def rule_of(ci):
            return self._rule_id(program, ci)
        base = [clause_function(ns, p, rule_of=rule_of) for p in plans.base]
        delta_fns = [[delta_function(ns, [p], rule_of) for p in g]
                     for g in plans.deltas]
        stores, inserters, _ = ns.stores(rid)   # (this stratum's relations: kept up to date as tuples arrive)
        self._bind(ns)
        for ri, r in enumerate(here):
            for tup in self._data[r]:   # (the facts loaded into it)
                inserters[ri](tup)
        prov = [{} for _ in here]
        height = [self._next_height()]
        new: list[list] = [[] for _ in here]

        def emit(ri, tup, rule):
            if inserters[ri](tup):
                new[ri].append(tup)
                if self.provenance:
                    prov[ri][tup] = (rule, height[0])

        for fn in base:
            fn(emit)
        # the first round: every tuple (facts loaded into the stratum's relations start it too)
        new = [list(store) for store in stores]
        while any(new):
            delta, new[:] = list(new), [[] for _ in here]
            height[0] = self._next_height()
            for ri, tups in enumerate(delta):
                if tups:
                    for fn in delta_fns[ri]:
                        fn(tups, emit)
        ns.release()
        for ri, r in enumerate(here):
            self._store(r, stores[ri], prov[ri])

    def _store(self, relation: str, tuples: set, prov) -> None:
        """A relation's tuples (and their provenance) computed in Python, with its loaded facts."""
        tuples.update(self._loaded.get(relation, ()))
        if self._in_c(relation):
            self._empty((relation,))
            self._insert_c(relation, tuples)
        else:
            self._changed((relation,))
        self._data[relation] = tuples   # (for a C table: its set, made already)
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

    def read_columns(self, relation: str, *columns: str) -> dict:
        """The tuples (sorted) as numpy arrays, one per column named (default:
        every declared column), keyed by name."""
        import numpy as np
        decl = self.decl(relation)
        names = columns or [c.name for c in decl.columns]
        rows = self.read(relation)
        out = {}
        for name, i in zip(names, positions(decl, names)):
            vals = [r[i] for r in rows]
            out[name] = np.array(vals, dtype=object if decl.columns[i].kind == "symbol" else None)
        return out

    def row_matrix(self, relation: str, *columns: str):
        """(rows as an (n, k) int64 array of the columns named, default every
        declared column, with symbols as ids; the symbol strings by id) for a
        relation held in C; None for one held in Python."""
        decl = self._kept(relation)
        if not self._in_c(relation):
            return None
        matrix = self._db.row_matrix(relation)
        if columns:
            at = positions(decl, columns)
            if at != tuple(range(decl.arity)):
                matrix = matrix[:, list(at)]
        return matrix, self._db.symbols()

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


class _Tables(dict):
    """Relation -> its tuples as a Python set; a relation held in C is made
    from its table when first read (and dropped when the table changes)."""

    def __init__(self, db: NativeDB):
        super().__init__()
        self.db = db

    def __missing__(self, relation: str) -> set:
        rows = self[relation] = self.db.rows(relation)
        return rows
