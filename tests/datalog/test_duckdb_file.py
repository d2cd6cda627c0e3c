"""The DuckDB file writer (sdylog/datalog/duckdb_file.py): its cached file
of tables and views never fails a run, and a Writer never replaces or
removes a file it did not make. (What the files hold: tests/datalog/
test_engine_api.py, tests/commands/test_relations.py.)"""
import duckdb
import pytest

from sdylog.datalog import duckdb_file, make_engine, parse_program
from sdylog.datalog.duckdb_file import Relation, Writer

TC = parse_program("""
.decl edge(src: number, dst: number)
.input edge
.decl path(src: number, dst: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
""", "tc.dl")


@pytest.fixture
def engine():
    with make_engine(TC, "memory") as e:
        e.load("edge", [(1, 2), (2, 3)])
        e.run()
        yield e


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache folder, every file starting from its cached tables and views."""
    monkeypatch.setattr(duckdb_file, "CACHED_SCHEMA_ROWS", 0)
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def paths(db) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT src, dst FROM path ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_failing_cache_clean_up_fails_no_run(tmp_path, engine, cache, monkeypatch):
    # (another process cleaning the cache folder meanwhile: the schema file is made, the clean-up fails)
    def gone(*args):
        raise FileNotFoundError("removed meanwhile")
    monkeypatch.setattr("sdylog.datalog.cache.drop_least_recent", gone)
    duckdb_file.save(str(tmp_path / "a.duckdb"), engine)
    assert paths(tmp_path / "a.duckdb") == [(1, 2), (1, 3), (2, 3)]
