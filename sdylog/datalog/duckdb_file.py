"""Relations into a DuckDB file, small and fast to write.

DuckDB gives every table at least a block of its own (256 KB by default):
one table per relation made a 29 MB file of 188 nearly empty tables for a
13-value module, and each CREATE TABLE costs about a millisecond and a half.
So the tuples of all relations of one arity share a table `_rows<arity>`
(`rel` the relation's number, then columns `c0`, `c1`, ... as int64; a
symbol column holds ids into `_symbols`), written from numpy arrays (no
Python tuple per row, no pyarrow), in 64 KB blocks; each relation is a view
named as the relation, with its declared column names, symbols as text,
and any lookup columns a caller adds beside an id column (a name beside a
value id). A table `relations` says what each relation is. A relation with
a float column, or a number beyond 64 bits, has a table `_wide<k>` of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Blocks of 64 KB: a small module's file stays small (examples/mlp.mlir: 1.2
# MB; 0.5 MB with DuckDB's smallest, 16 KB), and a large one's compresses
# (transformer_L48: 3.4 MB; 13 MB in 16 KB blocks, 5.5 MB in the default 256 KB).
BLOCK_SIZE = 65536


@dataclass
class RelationData:
    """One relation's tuples: an (n, arity) int64 array, symbol columns as
    ids into the file's symbol list; or, for a relation with a float column
    or a number beyond 64 bits (the memory engine computes with Python's
    integers: a tensor of 2^63 elements or more has such a size), its
    tuples as they are in `wide` (a table of its own: DOUBLE, HUGEINT, or
    decimal text beyond 128 bits)."""
    decl: object                     # RelationDecl
    rows: np.ndarray | None
    kind: str = ""                   # "input" / "derived" (relations table)
    doc: str = ""
    where: str = ""                  # where it is declared
    wide: list | None = None

    @property
    def count(self) -> int:
        return len(self.wide) if self.wide is not None else len(self.rows)


@dataclass
class Lookup:
    """A table of names keyed by id (`id` and the named columns), and which
    columns of which relations it names: {relation: [(column index, [(lookup
    column, view column name)])]}."""
    table: str
    columns: dict                    # column name -> numpy array (one is "id")
    joins: dict = field(default_factory=dict)


def save(path: str, engine) -> None:
    """Every relation of `engine` into a new DuckDB file at `path` (which
    must not exist)."""
    symbols: list[str] = []
    data = []
    for name in engine.relations:
        decl = engine.decl(name)
        rows, symbols, wide = relation_matrix(engine, decl, symbols)
        data.append(RelationData(decl, rows, wide=wide))
    with Writer(path) as out:
        out.add(data, symbols)
        out.close()


class Writer:
    """A new DuckDB file at `path` (which must not exist), written part by
    part as the parts are ready (`add`), in one transaction that `close`
    commits: `run --db` writes propagation's relations while the pipeline
    goes on to the reshard rules, whose relations follow. Each part's rows
    are appended to the same tables, so the file is as one `write` of all
    parts makes it. Used as a context manager: leaving it without `close`
    (a failure) commits nothing.

    One DuckDB thread by default: `run --db` writes while the pipeline goes
    on, and DuckDB's own workers would take the cores from it (0.1 s less
    CPU on transformer_L48's run --db, the file as fast to write)."""

    def __init__(self, path: str, threads: int = 1):
        import duckdb
        self.con = duckdb.connect(config={"threads": threads})
        self.count = 0                     # relations added: the next one's number
        self.symbols: list[str] = []       # symbols in the file
        self.made: set[str] = set()        # tables made (the shared ones get the next parts' rows)
        self.taken = {"relations", "_symbols"}   # (lower case) names of tables and views
        try:
            self.con.execute(f"ATTACH '{_sql_text(path)}' AS out (BLOCK_SIZE {BLOCK_SIZE})")
            self.con.execute("BEGIN")
        except BaseException:
            self.con.close()
            raise

    def add(self, relations: list[RelationData], symbols: list[str], lookups: list[Lookup] = ()) -> None:
        """The relations (numbered after those added before), their views and
        lookups; `symbols`: the file's symbol list, which extends the one
        the previous part gave."""
        assert symbols[:len(self.symbols)] == self.symbols, "a part's symbols extend the previous ones"
        tables = {lk.table.lower() for lk in lookups}
        assert not tables & self.taken, f"lookup tables {tables & self.taken} named as earlier tables or views"
        self.taken |= tables
        self.taken |= {f"_rows{r.decl.arity}" for r in relations}
        _write_tables(self, relations, symbols, lookups)
        self.con.execute(";".join(_views(self, relations, lookups)) or "SELECT 1")
        self.symbols = list(symbols)
        self.count += len(relations)

    def close(self) -> None:
        self.con.execute("COMMIT")
        self.con.execute("DETACH out")
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.con.close()                   # (a second close is harmless; without COMMIT: nothing written)


def relation_matrix(engine, decl, symbols: list[str]):
    """(the relation's rows as an int64 array with symbol ids into `symbols`,
    the symbol list, None), from the engine's C tables when it has them
    (their symbol list then serves all, or, when it does not extend
    `symbols`, their ids are mapped into it), else from its tuples; (None,
    symbols, the tuples) for a relation with a float column or a number
    beyond 64 bits."""
    held = getattr(engine, "row_matrix", None)
    found = held(decl.name) if held is not None else None
    if found is not None:
        rows, c_symbols = found
        if len(c_symbols) >= len(symbols) and c_symbols[:len(symbols)] == symbols:
            return rows, c_symbols, None
        # another engine's (the reshard rules' after propagation's): its symbol ids mapped into ours
        symbols, ours = _symbol_ids(symbols, c_symbols)
        rows = rows.copy()
        for j, c in enumerate(decl.columns):
            if c.kind == "symbol":
                rows[:, j] = ours[rows[:, j]]
        return rows, symbols, None
    rows = list(engine.scan(decl.name))
    if "float" in decl.kinds or any(type(v) is int and not -2 ** 63 <= v < 2 ** 63 for r in rows for v in r):
        return None, symbols, rows
    out = np.zeros((len(rows), decl.arity), np.int64)
    if not decl.arity:
        return out, symbols, None
    ids = {s: i for i, s in enumerate(symbols)}
    symbols = list(symbols)
    for j, c in enumerate(decl.columns):
        col = [r[j] for r in rows]
        if c.kind == "symbol":
            for k, v in enumerate(col):
                sid = ids.get(v)
                if sid is None:
                    sid = ids[v] = len(symbols)
                    symbols.append(v)
                col[k] = sid
        out[:, j] = col
    return out, symbols, None


def _symbol_ids(symbols: list[str], others: list[str]):
    """(`symbols` grown by those of `others` it lacks, the id in it of each
    of `others` as an int64 array)."""
    ids = {s: i for i, s in enumerate(symbols)}
    symbols = list(symbols)
    ours = np.empty(len(others), np.int64)
    for k, s in enumerate(others):
        if s not in ids:
            ids[s] = len(symbols)
            symbols.append(s)
        ours[k] = ids[s]
    return symbols, ours


def _write_tables(out: Writer, relations: list[RelationData], symbols: list[str], lookups) -> None:
    con = out.con
    by_arity: dict[int, list] = {a: [] for a in range(max((r.decl.arity for r in relations), default=0) + 1)}
    for k, r in enumerate(relations, out.count):
        if r.wide is not None:
            _create_wide(con, k, r)
        elif len(r.rows):
            by_arity[r.decl.arity].append((k, r.rows))
    for arity, blocks in by_arity.items():
        if f"_rows{arity}" in out.made and not blocks:
            continue
        rel = np.concatenate([np.full(len(m), k, np.int16) for k, m in blocks]) if blocks \
            else np.zeros(0, np.int16)
        mat = np.concatenate([m for _, m in blocks]) if blocks else np.zeros((0, arity), np.int64)
        _create(out, f"_rows{arity}", {"rel": rel, **{f"c{j}": np.ascontiguousarray(mat[:, j])
                                                       for j in range(arity)}})
    _create(out, "_symbols", {"id": np.arange(len(out.symbols), len(symbols), dtype=np.int64),
                              "name": np.array(symbols[len(out.symbols):], dtype=object)})
    _create(out, "relations", {
        "id": np.arange(out.count, out.count + len(relations), dtype=np.int64),
        "name": np.array([r.decl.name for r in relations], dtype=object),
        "kind": np.array([r.kind for r in relations], dtype=object),
        "columns": np.array([", ".join(f"{c.name}: {c.type_name}" for c in r.decl.columns) for r in relations],
                            dtype=object),
        "rows": np.array([r.count for r in relations], dtype=np.int64),
        "doc": np.array([r.doc for r in relations], dtype=object),
        "declared_at": np.array([r.where for r in relations], dtype=object)})
    for lk in lookups:
        _create(out, lk.table, lk.columns)


def _create_wide(con, k: int, r: RelationData) -> None:
    """`_wide<k>`: a relation with a float column or numbers beyond 64 bits,
    each number column BIGINT, HUGEINT or (beyond 128 bits) its decimal text."""
    cols, sel = {}, []
    for j, c in enumerate(r.decl.columns):
        values = [t[j] for t in r.wide]
        if c.kind in ("symbol", "float"):
            cols[f"c{j}"] = np.array(values, dtype=object if c.kind == "symbol" else np.float64)
            sel.append(f"c{j}")
            continue
        lo, hi = (min(values), max(values)) if values else (0, 0)
        sql = "BIGINT" if -2 ** 63 <= lo and hi < 2 ** 63 else \
            "HUGEINT" if -2 ** 127 <= lo and hi < 2 ** 127 else "VARCHAR"
        cols[f"c{j}"] = np.array([str(v) for v in values], dtype=object)
        sel.append(f"CAST(c{j} AS {sql}) AS c{j}")
    con.register("__src", cols)
    try:
        con.execute(f"CREATE TABLE out._wide{k} AS SELECT {', '.join(sel)} FROM __src")
    finally:
        con.unregister("__src")


def _create(out: Writer, table: str, columns: dict) -> None:
    """Table `table` with the columns, or (when an earlier part made it: the
    shared tables) the rows appended."""
    con = out.con
    con.register("__src", columns)
    try:
        if table in out.made:
            con.execute(f"INSERT INTO out.{_ident(table)} SELECT * FROM __src")
        else:
            con.execute(f"CREATE TABLE out.{_ident(table)} AS SELECT * FROM __src")
            out.made.add(table)
    finally:
        con.unregister("__src")


def _views(file: Writer, relations: list[RelationData], lookups) -> list[str]:
    """CREATE VIEW for each relation (named as it, unless a table or an
    earlier view has the name, ignoring case)."""
    out = []
    taken = file.taken
    for k, r in enumerate(relations, file.count):
        decl = r.decl
        extra: dict[int, list] = {}
        for lk in lookups:
            for col, fields in lk.joins.get(decl.name, ()):
                extra.setdefault(col, []).append((lk.table, fields))
        sel, joins = [], []
        for j, c in enumerate(decl.columns):
            if c.kind == "symbol" and r.wide is None:
                joins.append(f"LEFT JOIN out._symbols s{j} ON s{j}.id = r.c{j}")
                sel.append(f"s{j}.name AS {_ident(c.name)}")
            else:
                sel.append(f"r.c{j} AS {_ident(c.name)}")
            for m, (table, fields) in enumerate(extra.get(j, ())):
                alias = f"n{j}_{m}"
                joins.append(f"LEFT JOIN out.{_ident(table)} {alias} ON {alias}.id = r.c{j}")
                sel.extend(f"{alias}.{_ident(f)} AS {_ident(name)}" for f, name in fields)
        body = ", ".join(sel) or "true AS holds"
        view = decl.name
        while view.lower() in taken:       # (DuckDB names ignore case)
            view += "_"
        taken.add(view.lower())
        source = f"out._wide{k} r" if r.wide is not None else f"out._rows{decl.arity} r"
        only = "" if r.wide is not None else f" WHERE r.rel = {k}"
        out.append(f"CREATE VIEW out.{_ident(view)} AS SELECT {body} FROM {source} {' '.join(joins)}{only}")
    return out


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_text(s: str) -> str:
    return s.replace("'", "''")
