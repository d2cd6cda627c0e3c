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


def test_a_writer_removes_only_a_file_it_made(tmp_path, engine):
    # a failure before the file is made: what another process put at the path since stays
    db = tmp_path / "a.duckdb"
    with pytest.raises(RuntimeError), Writer(str(db)):
        db.write_text("another's")
        raise RuntimeError("the pipeline failed")
    assert db.read_text() == "another's"


@pytest.mark.parametrize("from_cache", [True, False])
@pytest.mark.parametrize("made", ["file", "symlink"])
def test_a_path_made_after_the_writer_starts_is_neither_replaced_nor_followed(tmp_path, engine, monkeypatch,
                                                                               from_cache, made):
    if from_cache:
        monkeypatch.setattr(duckdb_file, "CACHED_SCHEMA_ROWS", 0)
        monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
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
    assert paths(tmp_path / "a.duckdb") == [(1, 2), (1, 3), (2, 3)]
    assert not cached.exists()                  # (removed: made again by the next file)
    duckdb_file.save(str(tmp_path / "b.duckdb"), engine)
    assert cached.exists() and paths(tmp_path / "b.duckdb") == [(1, 2), (1, 3), (2, 3)]
