"""A propagation run's relations for people: names beside ids (`sdylog
query`), the list of relations with their documentation (`query --list`),
and the DuckDB file (`run --db`, `Propagation.to_duckdb`).

A column whose type is a value (`Value`, or a subtype such as `Tensor`)
gets `<column>_name` beside it: the input's name of the value (`%3`, `x`,
`@relu:%1`); a column of type `Op` gets `<column>_kind` and `<column>_loc`
(the op's MLIR name and its `file:line:col (jit(f)/name)`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sdylog.datalog.table import Extra

# what an id names, by the type its column is declared with (or a subtype's base)
_ID_TYPES = {"Value": "value", "Op": "op"}


def id_kind(program, type_name: str) -> str | None:
    """"value", "op" or None for a column type (following `.type T <: Base`)."""
    seen = set()
    while type_name not in _ID_TYPES and type_name not in seen:
        seen.add(type_name)
        t = program.types.get(type_name)
        if t is None or not t.subset or len(t.bases) != 1:
            return None
        type_name = t.bases[0]
    return _ID_TYPES.get(type_name)


def id_columns(program, decl) -> list[tuple[int, str]]:
    """(column index, "value" | "op") of the decl's id columns."""
    out = []
    for i, c in enumerate(decl.columns):
        kind = id_kind(program, c.type_name)
        if kind is not None:
            out.append((i, kind))
    return out


def extras(program, decl, names) -> list[Extra]:
    """The columns `sdylog query` adds beside the relation's id columns."""
    out = []
    for i, kind in id_columns(program, decl):
        col = decl.columns[i].name
        if kind == "value":
            out.append(Extra(i, f"{col}_name", names.value))
        else:
            out.append(Extra(i, f"{col}_kind", lambda o: names.op(o)[0]))
            out.append(Extra(i, f"{col}_loc", lambda o: names.op(o)[1]))
    return out


class FactNames:
    """Names for the ids of a run other than propagation's, from its own
    facts (an MPMD run's: the module after its calls are inlined, whose ids
    are not propagation's): an op id by its kind and location, a value id by
    the input's name of the value (`names`: value id -> name, mpmd_engine's,
    which names only values still what they were in the input), else what
    makes it (`<stablehlo.add result 0>`, `<block argument 1 of
    stablehlo.reduce>`: a copy the inlining made)."""

    def __init__(self, facts, names: dict, filename: str):
        from sdylog.commands.values import loc_text, op_name
        from sdylog.ir.rewrite import value_key
        self._values = [None] * len(facts.values)
        calls: dict = {}
        with facts.module.context:
            self._ops = [None if op is None else (op_name(op), loc_text(op, filename, calls)) for op in facts.ops]
            for vid, v in enumerate(facts.values):
                if v is None:
                    continue
                name = names.get(vid)
                if name is None:   # (a value the inlining made)
                    kind, op, i = value_key(v)[:3]
                    name = f"<block argument {i} of {op}>" if kind == "arg" else f"<{op} result {i}>"
                self._values[vid] = name

    def value(self, vid: int) -> str:
        if 0 <= vid < len(self._values) and self._values[vid] is not None:
            return self._values[vid]
        return "?"

    def op(self, o: int) -> tuple[str, str]:
        """(kind, location) of op id `o`."""
        if 0 <= o < len(self._ops) and self._ops[o] is not None:
            return self._ops[o]
        return ("?", "?")

    def all_values(self) -> list[tuple[int, str]]:
        """(id, name) of every value (the DuckDB file's value_names)."""
        return [(v, n) for v, n in enumerate(self._values) if n is not None]

    def all_ops(self) -> list[tuple[int, tuple[str, str]]]:
        """(id, (kind, location)) of every op (the DuckDB file's op_names)."""
        return [(o, kl) for o, kl in enumerate(self._ops) if kl is not None]


# ------------------------------------------------------------------ which run holds a relation
# The evaluations whose relations `sdylog query` reads, in the order `query --list` lists
# them: propagation's (on the input), the reshard rules' and their costs' (Shardy's full
# version on the module the pipeline leaves: `run --db` writes both), the MPMD rules' (the
# module with its calls inlined). Each relation is declared by one of them, but the input
# relations of rules/schema.dl (and what schema.dl derives), which each run has of its own.
RUNS = ("propagation", "reshard", "mpmd")


def run_programs(run: str) -> tuple:
    """The rule programs of `run` (one of RUNS)."""
    if run == "propagation":
        from sdylog.propagation.driver import propagation_program
        return (propagation_program(),)
    if run == "reshard":
        from sdylog.reshard.costs import costs_program
        from sdylog.reshard.driver import reshard_program
        return (reshard_program(), costs_program())
    from sdylog.mpmd.driver import mpmd_program
    return (mpmd_program(),)


def runs_of(relation: str) -> list[str]:
    """The runs (of RUNS, in order) whose programs declare `relation`."""
    return [run for run in RUNS if any(relation in p.relations for p in run_programs(run))]


def relation_run(relation: str, mpmd_module) -> str | None:
    """The run `sdylog query FILE RELATION` reads RELATION from: the one
    declaring it; for one every run has (rules/schema.dl's), the MPMD run's
    on a module that places ops on devices (`mpmd_module()`, asked only
    then: propagation refuses such a module), else propagation's. None: no
    run declares it."""
    runs = runs_of(relation)
    if len(runs) > 1 and "mpmd" in runs and mpmd_module():
        return "mpmd"
    return runs[0] if runs else None


def every_relation(engines: dict | None = None, runs=RUNS) -> list[dict]:
    """relation_list of each run of `runs`, a relation once (under the first
    run declaring it); with `engines` (run -> engine), its row count (None
    where `engines` lacks its run's engine)."""
    rows, listed = [], set()
    for run in runs:
        engine = (engines or {}).get(run)
        for program in run_programs(run):
            rows += [r for r in relation_list(program, engine) if r["relation"] not in listed]
            listed |= {r["relation"] for r in rows}
    if engines is not None:
        for r in rows:
            r.setdefault("rows", None)
    return rows


def relation_list(program, engine=None) -> list[dict]:
    """Every relation with its kind, columns and documentation (and its
    row count when an engine ran it)."""
    from sdylog.datalog.docs import relation_docs
    out = []
    for d in relation_docs(program).values():
        row = {"relation": d.name, "kind": d.kind, "columns": d.columns, "doc": d.doc, "declared_at": d.where}
        if engine is not None:
            row["rows"] = _size(engine, d.name)
        out.append(row)
    return out


def _size(engine, relation: str) -> int | None:
    try:
        return engine.size(relation)
    except Exception:    # a relation the run freed
        return None


def format_list(rows: list[dict], fmt: str) -> str:
    if fmt in ("csv", "json"):
        from sdylog.datalog.table import Selection, render
        cols = list(rows[0]) if rows else []
        return render(Selection("relations", cols, [tuple(r[c] for c in cols) for r in rows], len(rows)), fmt)
    lines = []
    for r in rows:
        count = f", {r['rows']} rows" if r.get("rows") is not None else ""
        lines.append(f"{r['relation']}({r['columns']})  [{r['kind']}{count}; {r['declared_at']}]")
        if r["doc"]:
            lines.extend(_wrap(r["doc"], "    "))
    return "\n".join(lines) + "\n"


def _wrap(text: str, indent: str, width: int = 100) -> list[str]:
    import textwrap
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent)


# ------------------------------------------------------------------ the DuckDB file
@dataclass(frozen=True)
class DatabasePart:
    """Relations of one engine for the DuckDB file: those its programs
    declare, but those named in `leave_out` (not the engine's own working
    relations); the names of their values and ops go to tables
    `<prefix>value_names` and `<prefix>op_names` (each engine's facts number
    values and ops their own way)."""
    programs: tuple                  # the first one's types say which columns are ids
    leave_out: frozenset = frozenset()
    prefix: str = ""


def save_database(path: str, parts: list[DatabasePart], handed: Iterable) -> None:
    """Every relation of the parts into a new DuckDB file at `path`, with
    the names of values and ops beside their ids (sdylog/datalog/duckdb_file.py):
    the parts declared first (their views made before any row: `run --db`
    starts the file with the pipeline), then, for each part, its rows as
    soon as `handed` gives its engine, then the names of its ids as soon as
    `handed` gives its IdNames (`run --db` hands over propagation's engine
    before its ids are named, its names once they are made, the reshard
    rules' engine and names once those rules ran)."""
    from sdylog.datalog.duckdb_file import Writer

    handed = iter(handed)
    with Writer(path) as out:
        declared = [_declare(out, part) for part in parts]
        for part, relations in zip(parts, declared):
            out.add(next(handed), relations)
            out.add_lookups(_names(part, next(handed)))
        out.close()


def _declare(out, part: DatabasePart) -> list[str]:
    """Declares the part's relations and its lookups in `out` (a Writer);
    returns the relations' names."""
    from sdylog.datalog.docs import relation_docs
    from sdylog.datalog.duckdb_file import Lookup, Relation

    relations = []
    value_joins, op_joins = {}, {}
    seen = set(part.leave_out)
    for program in part.programs:
        docs = relation_docs(program)
        for name, decl in program.relations.items():
            if name in seen:
                continue
            seen.add(name)
            doc = docs[name]
            relations.append(Relation(decl, doc.kind, doc.doc, doc.where))
            for i, kind in id_columns(program, decl):
                col = decl.columns[i].name
                if kind == "value":
                    value_joins.setdefault(name, []).append((i, [("name", f"{col}_name")]))
                else:
                    op_joins.setdefault(name, []).append((i, [("kind", f"{col}_kind"), ("loc", f"{col}_loc")]))
    out.declare(relations, [Lookup(f"{part.prefix}value_names", ("name",), value_joins),
                            Lookup(f"{part.prefix}op_names", ("kind", "loc"), op_joins)])
    return [r.decl.name for r in relations]


def _names(part: DatabasePart, names) -> dict:
    """The rows of the part's lookup tables: the names of its values and ops."""
    import numpy as np

    values, ops = names.all_values(), names.all_ops()
    return {f"{part.prefix}value_names": {"id": np.array([v for v, _ in values], dtype=np.int64),
                                          "name": np.array([n for _, n in values], dtype=object)},
            f"{part.prefix}op_names": {"id": np.array([o for o, _ in ops], dtype=np.int64),
                                       "kind": np.array([k for _, (k, _) in ops], dtype=object),
                                       "loc": np.array([w for _, (_, w) in ops], dtype=object)}}
