"""What every engine shares: relations kept in a DuckDB database between
evaluations (load facts, run a program or several, read, replace an input
and run again, save), whatever evaluates the rules."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.lexer import error
from sdylog.datalog.named_rows import NamedReads, positions
from sdylog.datalog.program import Program
from sdylog.datalog.sql import SQL_TYPE, UNIT_COLUMN, column_list, columns, ident
from sdylog.ir.diagnostics import SdylogError


def unknown_relation(relation: str):
    return error(None, f"unknown relation '{relation}'")


class DeclaredRelations:
    """The schema side every engine shares: relation declarations by name,
    and a relation declared again must keep its column types. An engine
    says where it holds them (`_declared`)."""

    def _declared(self, relation: str) -> RelationDecl | None:
        raise NotImplementedError

    def _declared_again(self, decl: RelationDecl) -> bool:
        """Whether DECL's relation is already held (an error if with other column types)."""
        have = self._declared(decl.name)
        if have is None:
            return False
        if have.kinds != decl.kinds:
            raise error(decl.loc, f"relation '{decl.name}' is declared with column types "
                        f"({', '.join(decl.kinds)}) but the database holds it with "
                        f"({', '.join(have.kinds)})")
        return True

    def decl(self, relation: str) -> RelationDecl:
        d = self._declared(relation)
        if d is None:
            raise unknown_relation(relation)
        return d

    def column_names(self, relation: str) -> list[str]:
        return [c.name for c in self.decl(relation).columns]

    def _program_to_run(self, program, relations: list[str] | None):
        """The program a run evaluates (default: the engine's), its relations
        declared here; every relation asked for must be one of its own."""
        program = program or self.program
        if program is None:
            raise error(None, "no program to run")
        self.declare(program)
        for r in relations or ():
            program.relation(r)
        return program


@dataclass
class StoredRelation:
    decl: RelationDecl
    table: str              # quoted table name
    edb_table: str | None   # facts loaded into a relation that rules also derive


class Engine(DeclaredRelations, NamedReads):
    """Base class: the store. Subclasses implement `_evaluate`."""

    name = "base"

    def __init__(self, program: Program | None = None, *, provenance: bool = False):
        import duckdb

        self.con = duckdb.connect()
        self.provenance = provenance
        self._rels: dict[str, StoredRelation] = {}
        self._derived_somewhere: set[str] = set()
        self._computed: set[str] = set()   # relations some run has evaluated
        self._loaded: set[str] = set()     # relations facts were loaded into
        self.program: Program | None = None
        if program is not None:
            self.declare(program)
            self.program = program

    # ---- schema ----
    def declare(self, program: Program) -> None:
        """Create tables for the program's relations (those already present
        must have the same column types)."""
        derived = set(program.derived)
        script = []
        for decl in program.relations.values():
            if self._declared_again(decl):
                continue
            table = ident(f"r{len(self._rels)}:{decl.name}")
            self._rels[decl.name] = StoredRelation(decl, table, None)
            script.append(f"CREATE TABLE {table} ({self._column_defs(decl)})")
        for name in derived - self._derived_somewhere:
            rel = self._rels[name]
            if rel.edb_table is None and name in self._loaded:
                # facts already loaded into a relation that rules now also derive
                edb = ident(f"edb:{rel.table[1:-1]}")
                script.append(f"CREATE TABLE {edb} AS SELECT * FROM {rel.table}")
                rel.edb_table = edb
        self._derived_somewhere |= derived
        if script:
            self.con.execute(";\n".join(script))

    def _column_defs(self, decl: RelationDecl) -> str:
        cols = [f"{c} {SQL_TYPE[col.kind]}" for c, col in zip(columns(decl.arity), decl.columns)] \
            if decl.arity else [f"{UNIT_COLUMN} BOOLEAN"]
        if self.provenance:
            cols += ["_rule INTEGER", "_height INTEGER"]
        return ", ".join(cols)

    def stored(self, relation: str) -> StoredRelation:
        rel = self._rels.get(relation)
        if rel is None:
            raise unknown_relation(relation)
        return rel

    def _declared(self, relation: str) -> RelationDecl | None:
        rel = self._rels.get(relation)
        return None if rel is None else rel.decl

    def table(self, relation: str) -> str:
        return self.stored(relation).table

    @property
    def relations(self) -> list[str]:
        return list(self._rels)

    # ---- facts in ----
    def load(self, relation: str, data) -> None:
        """Add facts to a relation (set semantics: duplicates are dropped)."""
        from sdylog.datalog.data import to_arrow

        rel = self.stored(relation)
        tbl = to_arrow(rel.decl, data)
        self._note_loaded(rel)
        self.con.register("__sdylog_load", tbl)
        try:
            self._insert_facts(rel, "SELECT * FROM __sdylog_load")
        finally:
            self.con.unregister("__sdylog_load")

    def insert_rows(self, relation: str, rows: list, derivations: list | None = None) -> None:
        """Append ROWS (tuples, none already held) to a relation's table; with
        provenance, DERIVATIONS holds each row's (rule id, height)."""
        import pyarrow as pa

        from sdylog.datalog.data import to_arrow
        rel = self.stored(relation)
        try:
            tbl = to_arrow(rel.decl, rows)
        except SdylogError:
            wide = self._widen(rel, rows)
            if not wide:
                raise
            tbl = _wide_arrow(rel.decl, rows, wide)
        if self.provenance:
            tbl = tbl.append_column("_rule", pa.array([d[0] for d in derivations], pa.int32()))
            tbl = tbl.append_column("_height", pa.array([d[1] for d in derivations], pa.int32()))
        self.con.register("__sdylog_rows", tbl)
        try:
            self.con.execute(f"INSERT INTO {rel.table} SELECT * FROM __sdylog_rows")
        finally:
            self.con.unregister("__sdylog_rows")

    def _widen(self, rel: StoredRelation, rows: list) -> dict[int, str]:
        """The columns of numbers beyond 64 bits (the memory engine computes with
        Python's integers: a tensor of 2^63 elements or more has such a size)
        become HUGEINT, or VARCHAR beyond 128 bits (their decimal digits), so
        that saving never overflows: column -> its new SQL type."""
        wide = {}
        for i, c in enumerate(rel.decl.columns):
            if c.kind not in ("number", "unsigned") or not rows:
                continue
            values = [r[i] for r in rows if isinstance(r[i], int)]
            lo, hi = (min(values), max(values)) if values else (0, 0)
            if lo < -2 ** 63 or hi >= 2 ** 63:
                wide[i] = "HUGEINT" if -2 ** 127 <= lo and hi < 2 ** 127 else "VARCHAR"
        for i, sql_type in wide.items():
            self.con.execute(f"ALTER TABLE {rel.table} ALTER c{i} TYPE {sql_type}")
        return wide

    def replace(self, relation: str, data) -> None:
        """Replace the facts of an input relation."""
        self.clear(relation)
        self.load(relation, data)

    def clear(self, relation: str) -> None:
        rel = self.stored(relation)
        script = [f"DELETE FROM {rel.table}"]
        if rel.edb_table:
            script.append(f"DELETE FROM {rel.edb_table}")
        self.con.execute(";\n".join(script))

    def load_file(self, relation: str, path: str, delimiter: str = "\t", display: str | None = None,
                  skip_header: bool = False, as_result: bool = False) -> None:
        """Add facts from a Soufflé facts file (one tuple a line, no quoting).
        `as_result`: tuples an evaluation produced (not kept as loaded facts)."""
        import duckdb

        rel = self.stored(relation)
        decl = rel.decl
        if not os.path.isfile(path):
            raise error(None, f"cannot open fact file '{display or path}' of relation '{relation}'")
        if decl.arity == 0:
            with open(path, encoding="utf-8") as f:
                if not as_result:
                    self._note_loaded(rel)
                if any(line.strip() for line in list(f)[int(skip_header):]):
                    self._insert_facts(rel, f"SELECT TRUE AS {UNIT_COLUMN}", as_result)
            return
        if os.path.getsize(path) == 0:
            return
        spec = ", ".join(f"'c{i}': '{'VARCHAR' if c.kind == 'symbol' else SQL_TYPE[c.kind]}'"
                         for i, c in enumerate(decl.columns))
        sel = ", ".join(f"COALESCE(c{i}, '') AS c{i}" if c.kind == "symbol" else f"c{i}"
                        for i, c in enumerate(decl.columns))
        src = (f"SELECT {sel} FROM read_csv({_sql_str(path)}, delim={_sql_str(delimiter)}, header=false, "
               f"quote='', escape='', auto_detect=false, skip={int(skip_header)}, columns={{{spec}}})")
        if not as_result:
            self._note_loaded(rel)
        try:
            self._insert_facts(rel, src, as_result)
        except duckdb.Error as e:
            raise _csv_error(e, display or path, relation) from None

    def _note_loaded(self, rel: StoredRelation) -> None:
        """Facts loaded into a relation that rules derive are kept apart too,
        so each run starts again from them."""
        self._loaded.add(rel.decl.name)
        if rel.edb_table is None and rel.decl.name in self._derived_somewhere:
            rel.edb_table = ident(f"edb:{rel.table[1:-1]}")
            self.con.execute(f"CREATE TABLE {rel.edb_table} AS SELECT * FROM {rel.table} WHERE FALSE")

    def _insert_facts(self, rel: StoredRelation, select_sql: str, as_result: bool = False) -> None:
        cols = column_list(rel.decl.arity)
        prov = ", -1 AS _rule, 0 AS _height" if self.provenance else ""
        script = []
        for table in filter(None, (rel.table, None if as_result else rel.edb_table)):
            script.append(f"INSERT INTO {table} SELECT DISTINCT {cols}{prov} FROM ({select_sql}) AS s "
                          f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS e WHERE "
                          + " AND ".join(f"e.{c} = s.{c}" for c in columns(rel.decl.arity)) + ")")
        self.con.execute(";\n".join(script))

    # ---- evaluation ----
    def run(self, program: Program | None = None, relations: list[str] | None = None) -> None:
        """Evaluate a program (default: the engine's) over the database.

        Relations the program derives are recomputed from their loaded facts;
        all others are read as they are. `relations` limits the work to the
        strata those relations need (the memory engine also frees every other
        relation as the run goes: only those asked for can be read after it;
        see DropPlan)."""
        program = self._program_to_run(program, relations)
        strata = needed_strata(program, relations)
        self._evaluate(program, strata)
        for s in strata:
            self._computed.update(s.relations)

    def _evaluate(self, program: Program, strata) -> None:
        raise NotImplementedError

    # ---- facts out ----
    def scan(self, relation: str):
        """The tuples of a relation, in no particular order."""
        return self.read(relation)

    def read(self, relation: str) -> list[tuple]:
        """The tuples of a relation, sorted."""
        decl = self.decl(relation)
        if decl.arity == 0:
            return [()] if self.size(relation) else []
        cols = column_list(decl.arity)
        return self.con.execute(f"SELECT {cols} FROM {self.table(relation)} ORDER BY {cols}").fetchall()

    def read_arrow(self, relation: str):
        """The tuples as an Arrow table, columns named as declared."""
        decl = self.decl(relation)
        if decl.arity == 0:
            import pyarrow as pa
            return pa.table({UNIT_COLUMN: pa.array([True] * min(self.size(relation), 1))})
        sel = ", ".join(f"c{i} AS {ident(c.name)}" for i, c in enumerate(decl.columns))
        return self.con.sql(f"SELECT {sel} FROM {self.table(relation)} ORDER BY ALL").to_arrow_table()

    def read_columns(self, relation: str, *columns: str) -> dict:
        """The tuples as numpy arrays, one per column named (default: every
        declared column), keyed by name."""
        decl = self.decl(relation)
        cols = column_list(decl.arity)
        res = self.con.execute(f"SELECT {cols} FROM {self.table(relation)} ORDER BY {cols}").fetchnumpy()
        names = columns or [c.name for c in decl.columns]
        return {name: res[f"c{i}"] for name, i in zip(names, positions(decl, names))}

    def size(self, relation: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {self.table(relation)}").fetchone()[0]

    def contains(self, relation: str, tup: tuple) -> bool:
        decl = self.decl(relation)
        if len(tup) != decl.arity:
            raise error(None, f"'{relation}' has {decl.arity} columns, the tuple has {len(tup)}")
        if not tup:
            return self.size(relation) > 0
        conds = " AND ".join(f"c{i} = ?" for i in range(len(tup)))
        return self.con.execute(f"SELECT count(*) FROM {self.table(relation)} WHERE {conds}",
                                list(tup)).fetchone()[0] > 0

    def save(self, path: str) -> None:
        """Write every relation (facts loaded and derived) into a new DuckDB
        file at `path`, one table per relation named as the relation, columns
        as declared. (Commands save through sdylog.outputs: whole or not at all.)"""
        self.con.execute(f"ATTACH {_sql_str(path)} AS __sdylog_save")
        try:
            taken: set[str] = set()
            for name, rel in self._rels.items():
                target = name
                while target.lower() in taken:       # DuckDB names ignore case
                    target += "_"
                taken.add(target.lower())
                d = rel.decl
                sel = ", ".join(f"c{i} AS {ident(c.name)}" for i, c in enumerate(d.columns)) \
                    or f"{UNIT_COLUMN}"
                self.con.execute(f"CREATE TABLE __sdylog_save.{ident(target)} AS "
                                 f"SELECT {sel} FROM {rel.table} ORDER BY ALL")
        finally:
            self.con.execute("DETACH __sdylog_save")

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _reads(program: Program) -> dict[str, set[str]]:
    """Relation -> the relations its clauses and subsumptive rules read
    (made once per program: a run asking for some relations reads it)."""
    cache = program.run_cache
    if "reads" not in cache:
        from sdylog.datalog.semantics import atoms_of
        reads: dict[str, set[str]] = {}
        for c in program.clauses:
            reads.setdefault(c.head.relation, set()).update(a.relation for a, _ in atoms_of(c.body))
        for sub in program.subsumptions:   # (a relation's subsumptive rules read their bodies too)
            reads.setdefault(sub.relation, set()).update(a.relation for a, _ in atoms_of(sub.as_clause().body))
        cache["reads"] = reads
    return cache["reads"]


def needed_strata(program: Program, relations: list[str] | None):
    if relations is None:
        return program.strata
    key = ("needed", tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _needed_strata(program, relations)
    return program.run_cache[key]


def _needed_strata(program: Program, relations: list[str]):
    reads = _reads(program)
    want: set[str] = set()
    todo = list(relations)
    while todo:
        r = todo.pop()
        if r not in want:
            want.add(r)
            todo.extend(reads.get(r, ()))
    return [s for s in program.strata if want & set(s.relations)]


@dataclass
class DropPlan:
    """When a run asked for some relations only (run(relations=...)), the
    others can go as soon as no later stratum of the run reads or writes
    them: `before` (no stratum of the run touches them) and `after[i]` (the
    last toucher is the run's i-th stratum). `kept` is what was asked for."""
    kept: tuple[str, ...]
    before: list[str]
    after: list[list[str]]


def drop_plan(program: Program, strata, kept, relations) -> DropPlan:
    """The DropPlan of a run of `strata` (needed_strata's) asked for `kept`,
    over the engine's `relations` (every one it holds)."""
    key = ("drop", tuple(map(id, strata)), tuple(kept), tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _drop_plan(program, strata, kept, relations)
    return program.run_cache[key]


def _drop_plan(program: Program, strata, kept, relations) -> DropPlan:
    reads = _reads(program)
    last: dict[str, int] = {}
    for i, s in enumerate(strata):
        for r in s.relations:
            last[r] = i
            for q in reads.get(r, ()):
                last[q] = i
    keep = set(kept)
    after: list[list[str]] = [[] for _ in strata]
    before = []
    for r in relations:
        if r in keep:
            continue
        if r in last:
            after[last[r]].append(r)
        else:
            before.append(r)
    return DropPlan(tuple(kept), before, after)


def _wide_arrow(decl: RelationDecl, rows: list, wide: dict[int, str]):
    """to_arrow, with the `wide` columns as their decimal digits (DuckDB casts them on insert)."""
    from sdylog.datalog.data import to_arrow
    as_text = RelationDecl(decl.name, tuple(replace(c, kind="symbol") if i in wide else c
                                            for i, c in enumerate(decl.columns)), decl.loc)
    return to_arrow(as_text, [tuple(str(v) if i in wide else v for i, v in enumerate(r)) for r in rows])


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


_CSV_LINE = re.compile(r"on Line: (\d+)")


_KIND_OF_SQL = {"BIGINT": "a number", "DOUBLE": "a float"}


def _csv_error(e, path: str, relation: str):
    """DuckDB's CSV reader's error in the words of facts_file.read_facts_file."""
    text = str(e)
    m = _CSV_LINE.search(text)
    if r := re.search(r'Could not convert string "([^"]*)" to \'(\w+)\'', text):
        detail = f"cannot read '{r[1]}' as {_KIND_OF_SQL.get(r[2], r[2].lower())}"
    elif r := re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text):
        detail = f"{r[2]} columns, the relation has {r[1]}"
    elif "Invalid unicode" in text:
        detail = "not UTF-8 text"
    else:
        detail = text.splitlines()[0]
    return error(None, f"facts of '{relation}': {detail}") if not m else \
        error_loc(path, int(m.group(1)), f"facts of '{relation}': {detail}")


def error_loc(path, line, message):
    from sdylog.datalog.lexer import Loc
    return error(Loc(path, line, 1), message)
