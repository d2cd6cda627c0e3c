"""The DuckDB file writer (sdylog/datalog/duckdb_file.py): its cached file
of tables and views never fails a run, and a Writer never replaces or
removes a file it did not make. (What the files hold: tests/datalog/
test_engine_api.py, tests/commands/test_relations.py.)"""
from pathlib import Path

import duckdb
import pytest

from sdylog.datalog import duckdb_file, load_program, make_engine
from sdylog.datalog.duckdb_file import Relation, Writer

PROGRAM = Path(__file__).parent / "programs" / "recursion.dl"


@pytest.fixture
def engine():
    with make_engine(load_program(str(PROGRAM)), "memory") as e:
        e.run()
        yield e


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache folder, every file starting from its cached tables and views."""
    monkeypatch.setattr(duckdb_file, "CACHED_SCHEMA_ROWS", 0)
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def holds_path(db, engine) -> bool:
    """Whether the file `db` holds the relation `path` as the engine does."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT x, y FROM path ORDER BY ALL").fetchall() == sorted(engine.read("path"))
    finally:
        con.close()


def test_a_failing_cache_clean_up_fails_no_run(tmp_path, engine, cache, monkeypatch):
    # (another process cleaning the cache folder meanwhile: the schema file is made, the clean-up fails)
    def gone(*args):
        raise FileNotFoundError("removed meanwhile")
    monkeypatch.setattr("sdylog.datalog.cache.drop_least_recent", gone)
    duckdb_file.save(str(tmp_path / "a.duckdb"), engine)
    assert holds_path(tmp_path / "a.duckdb", engine)


def test_a_writer_removes_only_a_file_it_made(tmp_path, engine):
    # a failure before the file is made: what another process put at the path since stays
    db = tmp_path / "a.duckdb"
    with pytest.raises(RuntimeError), Writer(str(db)):
        db.write_text("another's")
        raise RuntimeError("the pipeline failed")
    assert db.read_text() == "another's"


@pytest.mark.parametrize("from_cache", [True, False])
@pytest.mark.parametrize("made", ["file", "symlink"])
def test_a_path_made_after_the_writer_starts_is_neither_replaced_nor_followed(tmp_path, engine, request,
                                                                               from_cache, made):
    if from_cache:
        request.getfixturevalue("cache")
    target, db = tmp_path / "target", tmp_path / "a.duckdb"
    target.write_text("another's")
    with Writer(str(db)) as out:
        out.declare([Relation(engine.decl(name)) for name in engine.relations])
        if made == "file":
            db.write_text("another's")
        else:
            db.symlink_to(target)
        with pytest.raises(FileExistsError, match="the DuckDB file is written new"):
            out.add(engine, list(engine.relations))
    assert db.read_text() == target.read_text() == "another's"
    assert db.is_symlink() == (made == "symlink")


def test_a_cached_file_lacking_tables_or_views_is_not_used(tmp_path, engine, cache):
    duckdb_file.save(str(tmp_path / "first.duckdb"), engine)
    [cached] = cache.glob("duckdb-schema-*.duckdb")
    cached.unlink()
    con = duckdb.connect(str(cached))           # (a DuckDB file, but of other tables)
    con.execute("CREATE TABLE edge (x INT)")
    con.close()
    duckdb_file.save(str(tmp_path / "a.duckdb"), engine)
    assert holds_path(tmp_path / "a.duckdb", engine)
    assert not cached.exists()                  # (removed: made again by the next file)
    duckdb_file.save(str(tmp_path / "b.duckdb"), engine)
    assert cached.exists() and holds_path(tmp_path / "b.duckdb", engine)


@pytest.mark.parametrize("extension", [True, False])
def test_the_file_is_written_with_or_without_duckdbs_extension_module(tmp_path, engine, monkeypatch, extension):
    # duckdb 2 ships its engine as `_duckdb`, which the writer imports alone (the package's Python
    # costs ~0.07 s); where that import fails, the package serves (here: the package this module
    # imported already; a release without `_duckdb` is not installed to test it)
    if extension:
        pytest.importorskip("_duckdb")
    else:
        monkeypatch.setitem(__import__("sys").modules, "_duckdb", None)   # (import fails)
    assert duckdb_file._duckdb().__name__ == ("_duckdb" if extension else "duckdb")
    duckdb_file.save(str(tmp_path / "a.duckdb"), engine)
    assert holds_path(tmp_path / "a.duckdb", engine)


@pytest.mark.parametrize("native", ["1", "0"])
def test_numbers_beyond_32_bits_get_a_wide_table_their_rows_read_once(tmp_path, monkeypatch, native):
    """(relation_matrix: a relation with a number beyond 32 bits, held in C
    or in Python, is written as its tuples, read once, into `_wide<k>`.)"""
    from sdylog.datalog import parse_program
    monkeypatch.setenv("SDYLOG_NATIVE", native)
    p = parse_program(".decl n(x: number, s: symbol)\n.decl m(x: number)\n"
                      "m(x * 2) :- n(x, _).\n", "p.dl")
    with make_engine(p, "memory") as e:
        e.load("n", [(3, "a"), (2 ** 40, "b")])
        e.run()
        scans = []
        real = e.scan
        monkeypatch.setattr(e, "scan", lambda rel: scans.append(rel) or real(rel))
        e.save(str(tmp_path / "out.duckdb"))
    assert sorted(scans) == ["m", "n"]   # (each once, in C too: its matrix's range told)
    con = duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True)
    assert con.execute("SELECT x, s FROM n ORDER BY ALL").fetchall() == [(3, "a"), (2 ** 40, "b")]
    assert con.execute("SELECT x FROM m ORDER BY ALL").fetchall() == [(6,), (2 ** 41,)]
