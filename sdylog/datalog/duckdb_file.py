"""Relations into a DuckDB file, small and fast to write.

DuckDB gives every table at least a block of its own (256 KB by default):
one table per relation made a 29 MB file of 188 nearly empty tables for a
13-value module, and each CREATE TABLE costs about a millisecond and a half.
So the tuples of all relations of one arity share a table `_rows<arity>`
(`rel` the relation's number, then columns `c0`, `c1`, ... as 32-bit
integers, which DuckDB takes in a quarter less time than 64-bit ones; a
symbol column holds ids into `_symbols`), written from numpy arrays (no
Python tuple per row, no pyarrow), in 64 KB blocks; each relation is a view
named as the relation, with its declared column names, symbols as text,
and any lookup columns a caller adds beside an id column (a name beside a
value id). A table `relations` says what each relation is. A relation with
a float column, or a number beyond 32 bits, has a table `_wide<k>` of its own.
The tables and views are declared before any row, made with the first rows,
the rows appended as they come. DuckDB parses and binds a view when it is
made (transformer_L48's 555 views: 0.15 s of CPU), and the views depend on
the rules only, so a file of many rows starts as a copy of a file holding
just the tables and views, kept in the cache folder (copied and attached in
0.02 s).
"""
from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field

import numpy as np

# Blocks of 64 KB: a small module's file stays small (examples/mlp.mlir: 1.2
# MB; 0.5 MB with DuckDB's smallest, 16 KB), and a large one's compresses
# (transformer_L48: 3.4 MB; 13 MB in 16 KB blocks, 5.5 MB in the default 256 KB).
BLOCK_SIZE = 65536
# Row groups of 8,192 rows, not 122,880: DuckDB compresses and writes each
# full row group into the file as it is inserted, so most of propagation's
# rows are in the file while the reshard rules still run, and COMMIT, after
# the last part, has less to write. transformer_L48's reshard rules' rows
# and COMMIT, what is left once the pipeline is done, take 0.08 s of CPU
# (0.10 s in row groups of 16,384, as much in 4,096; COMMIT alone 0.1 s in
# 122,880); the whole file as much, 0.2 MB larger than in 122,880.
ROW_GROUP_SIZE = 8192
# A file made from the cached tables and views keeps their first catalog as free blocks when
# COMMIT writes the catalog again (~0.5 MB: examples/mlp.mlir's file would be 2.2 MB, not 1.8):
# a file of fewer rows makes its own.
CACHED_SCHEMA_ROWS = 20_000
_INT32 = np.iinfo(np.int32)
# Files of tables and views in the cache folder (~0.5 MB each): one per version of the rules with
# --partition and one without (its file holds fewer relations), and checkouts at other versions
# share the folder (as for the parsed programs, cache._MAX_PROGRAMS): 16 versions, 16 MB.
_MAX_SCHEMAS = 32


@dataclass(frozen=True)
class Relation:
    """What the file says of a relation besides its rows (the table
    `relations`)."""
    decl: object                     # RelationDecl
    kind: str = ""                   # "input" / "derived"
    doc: str = ""
    where: str = ""                  # where it is declared


@dataclass(frozen=True)
class Lookup:
    """A table of names keyed by id (`id` and the text `columns`), and which
    columns of which relations it names: {relation: [(column index, [(lookup
    column, view column name)])]}."""
    table: str
    columns: tuple[str, ...]
    joins: dict = field(default_factory=dict)


def save(path: str, engine) -> None:
    """Every relation of `engine` into a new DuckDB file at `path` (which
    must not exist)."""
    with Writer(path) as out:
        out.declare([Relation(engine.decl(name)) for name in engine.relations])
        out.add(engine, list(engine.relations))
        out.close()


class Writer:
    """A new DuckDB file at `path` (which must not exist), in one
    transaction that `close` commits. The relations are declared first
    (`declare`: the tables, empty, and each relation's view), their rows
    added as they are ready (`add`, `add_lookups`; the file is made with the
    first rows): `run --db` declares the relations while the pipeline runs,
    adds propagation's rows while their ids are named, the module exported
    and the reshard rules run, and theirs at the end (while the module is
    printed). Used as a context manager: leaving it without `close` (a
    failure) leaves no file.

    One DuckDB thread by default: `run --db` writes while the pipeline goes
    on, and DuckDB's own workers would take the cores from it (0.1 s less
    CPU on transformer_L48's run --db, the file as fast to write)."""

    def __init__(self, path: str, threads: int = 1):
        duckdb = _duckdb()
        _check_new(path)
        self.path = path
        self.made = False                  # whether this Writer made the file at `path` (_open)
        self.committed = False
        # checkpoint_threshold: COMMIT writes the rows into the file at once (any part passes the
        # threshold), not first into a write-ahead log (15 MB for transformer_L48) that DETACH's
        # checkpoint would copy into the file and delete. write_buffer_row_group_count: each full
        # row group written as it is inserted, not five at a time (less left for COMMIT, at the
        # end: 0.06 s of CPU instead of 0.09 on transformer_L48). No optimizer: the writer's
        # statements are CREATE VIEW and INSERT of whole arrays, and optimizing a view's query when
        # it is created (its readers' queries are optimized anyway) is a quarter of the CPU of
        # each CREATE VIEW.
        self.con = duckdb.connect(config={"threads": threads, "checkpoint_threshold": "1KB",
                                          "write_buffer_row_group_count": 1, "enable_optimizer": False})
        self.relations: dict[str, tuple[int, Relation]] = {}   # name -> (its number, rel), declared
        self.counts: dict[str, int] = {}   # name -> rows added
        self.lookups: list[Lookup] = []
        self.symbols: list[str] = []       # symbols of the rows added
        self.symbols_written = 0           # of them, those in the table _symbols
        self.taken = {"relations", "_symbols"}   # (lower case) names of tables and views
        self.views: dict[str, str] = {}    # relation -> its view's name
        self.schema = ["CREATE TABLE out._symbols (id BIGINT, name VARCHAR)"]   # what _open makes
        self.opened = False

    def declare(self, relations: list[Relation], lookups: list[Lookup] = ()) -> None:
        """The relations (numbered after those declared before), each with
        its view (a relation with a float column: with its rows), and the
        lookups' tables."""
        tables = {lk.table.lower() for lk in lookups}
        assert not tables & self.taken, f"lookup tables {tables & self.taken} named as earlier tables or views"
        arities = {r.decl.arity for r in relations} - {int(t[5:]) for t in self.taken if t.startswith("_rows")}
        self.taken |= tables | {f"_rows{a}" for a in arities}
        made = [f"CREATE TABLE out._rows{a} (rel SMALLINT{''.join(f', c{j} INTEGER' for j in range(a))})"
                for a in sorted(arities)]
        made += [f"CREATE TABLE out.{_ident(lk.table)} (id BIGINT"
                 f"{''.join(f', {_ident(c)} VARCHAR' for c in lk.columns)})" for lk in lookups]
        self.lookups += lookups
        new = []
        for r in relations:
            assert r.decl.name not in self.relations, f"{r.decl.name} declared twice"
            self.relations[r.decl.name] = (len(self.relations), r)
            if "float" not in r.decl.kinds:   # (else: a table of its own, made with the rows)
                new.append(r.decl.name)
        made += [self._view(name, wide=False) for name in new]
        if self.opened:
            self.con.execute(";".join(made))
        else:
            self.schema += made

    def _open(self, rows: int) -> None:
        """The file, with the tables and views declared so far, in a
        transaction: for a file of at least CACHED_SCHEMA_ROWS `rows`, a
        copy of the cached file holding just them (_cached_schema)."""
        self.opened = True
        schema = ";".join(self.schema)
        options = f"ROW_GROUP_SIZE {ROW_GROUP_SIZE}"   # (not kept in the file: given whenever it is attached)
        cached = None
        if rows >= CACHED_SCHEMA_ROWS:
            try:
                cached = _cached_schema(self.con, schema, options)
            except OSError:   # (the cache never fails a run: another process cleaning it, say)
                pass
        if cached is not None and not self._copy_of(cached, options):
            cached = None
        if cached is None:
            _check_new(self.path)          # (nor made since __init__: ATTACH would open it)
            self.made = True
            self.con.execute(f"ATTACH '{_sql_text(self.path)}' AS out (BLOCK_SIZE {BLOCK_SIZE}, {options})")
        self.con.execute("BEGIN")
        if cached is None:
            self.con.execute(schema)

    def _copy_of(self, cached: str, options: str) -> bool:
        """Whether the file could be made a copy of the cached file `cached`
        (then attached), holding as many tables and views as the schema
        makes; not when another process removed that meanwhile, nor when it
        is damaged (then removed: made again next time)."""
        duckdb = _duckdb()
        try:
            with open(cached, "rb") as schema:
                with open(self.path, "xb") as f:   # (an existing path neither replaced nor followed)
                    self.made = True
                    shutil.copyfileobj(schema, f)
            self.con.execute(f"ATTACH '{_sql_text(self.path)}' AS out ({options})")
            # (each statement of the schema makes one: a file that attaches but lacks some, one
            # replaced, say, is not used; the rules' 579 are counted in ~3 ms)
            found = self.con.execute(
                "SELECT (SELECT count(*) FROM duckdb_tables() WHERE database_name = 'out') + "
                "(SELECT count(*) FROM duckdb_views() WHERE database_name = 'out' AND NOT internal)").fetchone()
            if found == (len(self.schema),):
                return True
            damaged = True
        except FileExistsError:            # (`path` made by another since __init__: left as it is)
            _check_new(self.path)
            raise
        except duckdb.Error:
            damaged = True
        except OSError:                    # (removed by another process meanwhile)
            damaged = False
        if damaged:
            with contextlib.suppress(duckdb.Error):
                self.con.execute("DETACH DATABASE IF EXISTS out")
            with contextlib.suppress(OSError):
                os.remove(cached)
        self._remove_file()
        return False

    def add(self, engine, relations: list[str]) -> None:
        """The rows of `relations` (declared before) as `engine` holds them
        (those it lacks stay empty)."""
        held = set(engine.relations)
        if not self.opened:
            self._open(sum(engine.size(name) for name in relations if name in held))
        by_arity: dict[int, list] = {}
        views = []
        for name in relations:
            if name not in held:
                continue
            k, r = self.relations[name]
            rows, self.symbols, wide = relation_matrix(engine, r.decl, self.symbols)
            self.counts[name] = len(wide if wide is not None else rows)
            if wide is not None:
                _create_wide(self.con, k, r.decl, wide)
                views.append(self._view(name, wide=True))
            elif len(rows):
                by_arity.setdefault(r.decl.arity, []).append((k, rows))
        for arity, blocks in by_arity.items():
            rel = np.concatenate([np.full(len(m), k, np.int16) for k, m in blocks])
            # (one copy: each column contiguous, 32-bit)
            columns = np.concatenate([m.T for _, m in blocks], axis=1, dtype=np.int32)
            _insert(self.con, f"_rows{arity}", {"rel": rel, **{f"c{j}": columns[j] for j in range(arity)}})
        _insert(self.con, "_symbols", {"id": np.arange(self.symbols_written, len(self.symbols), dtype=np.int64),
                                       "name": np.array(self.symbols[self.symbols_written:], dtype=object)})
        self.symbols_written = len(self.symbols)
        if views:
            self.con.execute(";".join(views))

    def add_lookups(self, lookups: dict[str, dict]) -> None:
        """The lookups' rows: {table: {column: numpy array}}, the columns as
        declared, `id` first."""
        for table, columns in lookups.items():
            _insert(self.con, table, columns)

    def close(self) -> None:
        """The table `relations`; the file committed."""
        if not self.opened:
            self._open(0)
        for name, (k, r) in self.relations.items():
            if "float" in r.decl.kinds and name not in self.counts:   # (no rows: its table empty)
                _create_wide(self.con, k, r.decl, [])
                self.con.execute(self._view(name, wide=True))
        listed = list(self.relations.values())
        _from_arrays(self.con, {
            "id": np.array([k for k, _ in listed], dtype=np.int64),
            "name": np.array([r.decl.name for _, r in listed], dtype=object),
            "kind": np.array([r.kind for _, r in listed], dtype=object),
            "columns": np.array([", ".join(f"{c.name}: {c.type_name}" for c in r.decl.columns) for _, r in listed],
                                dtype=object),
            "rows": np.array([self.counts.get(r.decl.name, 0) for _, r in listed], dtype=np.int64),
            "doc": np.array([r.doc for _, r in listed], dtype=object),
            "declared_at": np.array([r.where for _, r in listed], dtype=object)},
            "CREATE TABLE out.relations AS SELECT * FROM __src")
        self.con.execute("COMMIT")
        self.committed = True
        self.con.execute("DETACH out")
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.con.close()                   # (a second close is harmless)
        if not self.committed:
            self._remove_file()

    def _remove_file(self) -> None:
        """The file and its log (made by ATTACH, or copied), if this Writer
        made them: nothing of them is kept."""
        if self.made:
            _remove_with_log(self.path)
        self.made = False

    def _view(self, relation: str, wide: bool) -> str:
        """CREATE VIEW for the relation (named as it, unless a table or an
        earlier view has the name, ignoring case); `wide`: over its own
        table `_wide<k>` (replacing the view made when it was declared)."""
        k, r = self.relations[relation]
        decl = r.decl
        extra: dict[int, list] = {}
        for lk in self.lookups:
            for col, fields in lk.joins.get(decl.name, ()):
                extra.setdefault(col, []).append((lk.table, fields))
        sel, joins = [], []
        for j, c in enumerate(decl.columns):
            if c.kind == "symbol" and not wide:
                joins.append(f"LEFT JOIN out._symbols s{j} ON s{j}.id = r.c{j}")
                sel.append(f"s{j}.name AS {_ident(c.name)}")
            else:
                sel.append(f"r.c{j} AS {_ident(c.name)}")
            for m, (table, fields) in enumerate(extra.get(j, ())):
                alias = f"n{j}_{m}"
                joins.append(f"LEFT JOIN out.{_ident(table)} {alias} ON {alias}.id = r.c{j}")
                sel.extend(f"{alias}.{_ident(f)} AS {_ident(name)}" for f, name in fields)
        body = ", ".join(sel) or "true AS holds"
        view = self.views.get(relation)
        if view is None:
            view = decl.name
            while view.lower() in self.taken:       # (DuckDB names ignore case)
                view += "_"
            self.taken.add(view.lower())
            self.views[relation] = view
        source = f"out._wide{k} r" if wide else f"out._rows{decl.arity} r"
        only = "" if wide else f" WHERE r.rel = {k}"
        return (f"CREATE {'OR REPLACE ' if wide else ''}VIEW out.{_ident(view)} AS SELECT {body} FROM {source} "
                f"{' '.join(joins)}{only}")


def _duckdb():
    """DuckDB: the extension module `_duckdb` that duckdb 2's package
    re-exports, without the package's own Python (importing that costs
    ~0.07 s of CPU holding the GIL, on the thread `run --db` writes from,
    beside the pipeline; `_duckdb` 0.01 s); the package where there is no
    such module."""
    try:
        import _duckdb as duckdb
    except ImportError:
        import duckdb
    return duckdb


def _check_new(path: str) -> None:
    if os.path.lexists(path):
        raise FileExistsError(f"{path}: the DuckDB file is written new")


def _remove_with_log(path: str) -> None:
    """A DuckDB file and its write-ahead log, where they exist."""
    for made in (path, path + ".wal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(made)


def _cached_schema(con, schema: str, options: str) -> str | None:
    """The path of a DuckDB file in the cache folder holding the tables and
    views `schema` makes (attached as `out`), made with `con` when missing;
    None without a writable cache folder."""
    import hashlib

    from sdylog.datalog.cache import cache_dir, drop_least_recent
    duckdb = _duckdb()
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(f"{duckdb.__version__}\n{BLOCK_SIZE}\n{options}\n{schema}".encode()).hexdigest()[:32]
    path = os.path.join(folder, f"duckdb-schema-{key}.duckdb")
    if os.path.exists(path):
        with contextlib.suppress(OSError):
            os.utime(path)   # (its age says when it was last used: drop_least_recent)
        return path
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        # (attached as `out`, the name the statements give the catalog, as the file they start will be)
        con.execute(f"ATTACH '{_sql_text(tmp)}' AS out (BLOCK_SIZE {BLOCK_SIZE}, {options})")
        con.execute(f"BEGIN;{schema};COMMIT")
        con.execute("DETACH out")
        os.replace(tmp, path)
    except (OSError, duckdb.Error):
        for undo in ("ROLLBACK", "DETACH DATABASE IF EXISTS out"):   # (whatever was left open)
            with contextlib.suppress(duckdb.Error):
                con.execute(undo)
        _remove_with_log(tmp)
        return None
    drop_least_recent(folder, "duckdb-schema-", ".duckdb", _MAX_SCHEMAS)
    return path


def relation_matrix(engine, decl, symbols: list[str]):
    """(the relation's rows as an int64 array of 32-bit values, symbol ids
    into `symbols`, the symbol list, None), from the engine's C tables when
    it has them (their symbol list then serves all, or, when it does not
    extend `symbols`, their ids are mapped into it), else from its tuples;
    (None, symbols, the tuples) for a relation with a float column or a
    number beyond 32 bits (a table of its own: _create_wide)."""
    found = engine.row_matrix(decl.name)
    if found is not None:
        rows, c_symbols = found
        if rows.size and not (_INT32.min <= rows.min() and rows.max() <= _INT32.max):
            return None, symbols, list(engine.scan(decl.name))
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
    if "float" in decl.kinds or any(type(v) is int and not _INT32.min <= v <= _INT32.max for r in rows for v in r):
        return None, symbols, rows
    out = np.zeros((len(rows), decl.arity), np.int64)
    if not decl.arity:
        return out, symbols, None
    for j, c in enumerate(decl.columns):
        col = [r[j] for r in rows]
        if c.kind == "symbol":
            symbols, col = _symbol_ids(symbols, col)
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


def _create_wide(con, k: int, decl, rows: list) -> None:
    """`_wide<k>`: a relation with a float column or numbers beyond 32 bits,
    each number column BIGINT, HUGEINT or (beyond 128 bits) its decimal text."""
    cols, sel = {}, []
    for j, c in enumerate(decl.columns):
        values = [t[j] for t in rows]
        if c.kind in ("symbol", "float"):
            cols[f"c{j}"] = np.array(values, dtype=object if c.kind == "symbol" else np.float64)
            sel.append(f"c{j}")
            continue
        lo, hi = (min(values), max(values)) if values else (0, 0)
        sql = "BIGINT" if -2 ** 63 <= lo and hi < 2 ** 63 else \
            "HUGEINT" if -2 ** 127 <= lo and hi < 2 ** 127 else "VARCHAR"
        cols[f"c{j}"] = np.array([str(v) for v in values], dtype=object)
        sel.append(f"CAST(c{j} AS {sql}) AS c{j}")
    _from_arrays(con, cols, f"CREATE TABLE out._wide{k} AS SELECT {', '.join(sel)} FROM __src")


def _insert(con, table: str, columns: dict) -> None:
    """The columns' rows appended to table `table` (its columns in that order)."""
    _from_arrays(con, columns, f"INSERT INTO out.{_ident(table)} SELECT * FROM __src")


def _from_arrays(con, columns: dict, sql: str) -> None:
    """`sql` run with the columns (name -> numpy array) as the table __src."""
    con.register("__src", columns)
    try:
        con.execute(sql)
    finally:
        con.unregister("__src")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_text(s: str) -> str:
    return s.replace("'", "''")
