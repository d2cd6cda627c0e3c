"""Readable relations: `sdylog query` with names beside ids, --list,
--format, quoted filters; the --db DuckDB file (views with the same names,
the `relations` table, small)."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"


def sdylog(*args):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True)


def test_query_names_values_and_ops_beside_ids():
    p = sdylog("query", str(MLP), "final_dim_axis", "--where", "axis='model'")
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[0].split()
    assert header == ["t", "t_name", "d", "pos", "axis", "pre_size", "size"]
    names = [line.split()[1] for line in p.stdout.splitlines()[2:-1]]
    assert {"%arg1", "%0", "%1", "@relu:%0"} <= set(names)
    conflict = json.loads(sdylog("query", str(MLP), "conflict", "--format", "json").stdout)
    assert conflict[0]["op_kind"] == "stablehlo.dot_general" and conflict[0]["op_loc"].endswith("mlp.mlir:6:10")
    assert conflict[0]["t_b_name"] == "%arg2"


def test_query_formats_and_filters_on_names():
    p = sdylog("query", str(MLP), "final_dim_axis", "-w", "t_name=%0", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [(r["d"], r["axis"]) for r in rows] == [("0", "data"), ("1", "model")]
    table = sdylog("query", str(MLP), "final_dim_axis", "-w", 'axis="data"', "-w", "d=0")
    assert table.stdout.splitlines()[-1].endswith("(filtered)")
    assert all(line.split()[4] == "data" for line in table.stdout.splitlines()[2:-1])


@pytest.mark.parametrize("args,message", [
    (["final_dim_axis", "-w", "nope=1"], "has no column 'nope' (columns: t, t_name, d,"),
    (["final_dim_axis", "-w", "d=x"], "column 'd' of 'final_dim_axis' holds number values, given 'x'"),
    (["no_such", ], "unknown relation 'no_such'"),
])
def test_query_errors_name_what_is_there(args, message):
    p = sdylog("query", str(MLP), *args)
    assert p.returncode == 1 and message in p.stderr


def test_query_list():
    p = sdylog("query", "--list")
    assert p.returncode == 0, p.stderr
    assert "final_dim_axis(t: Tensor, d: number, pos: number, axis: symbol, pre_size: number, size: number)" \
        in p.stdout
    assert "    Dimension d of tensor t is sharded on" in p.stdout
    rows = json.loads(sdylog("query", str(MLP), "--list", "--format", "json").stdout)
    by_name = {r["relation"]: r for r in rows}
    assert by_name["op"]["kind"] == "input" and by_name["op"]["rows"] == 12
    assert by_name["final_dim_axis"]["kind"] == "derived" and by_name["final_dim_axis"]["rows"] > 0


def test_db_file_is_small_and_readable(tmp_path):
    import duckdb
    db = tmp_path / "rel.duckdb"
    p = sdylog("run", str(MLP), "-q", "-o", str(tmp_path / "out.mlir"), "--db", str(db))
    assert p.returncode == 0, p.stderr
    assert db.stat().st_size < 2 * 1024 * 1024
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT t_name, d, axis FROM final_dim_axis WHERE axis = 'model' ORDER BY ALL").fetchall()
    query = sdylog("query", str(MLP), "final_dim_axis", "-w", "axis=model", "--format", "json").stdout
    assert rows == sorted((r["t_name"], r["d"], r["axis"]) for r in json.loads(query))
    op = con.execute("SELECT op_kind, op_loc FROM conflict").fetchall()
    assert op[0][0] == "stablehlo.dot_general" and op[0][1].endswith("mlp.mlir:6:10")
    kinds = dict(con.execute("SELECT name, kind FROM relations").fetchall())
    assert kinds["op"] == "input" and kinds["final_dim_axis"] == "derived" and len(kinds) > 150
    doc = con.execute("SELECT doc FROM relations WHERE name = 'final_dim_axis'").fetchone()[0]
    assert doc.startswith("Dimension d of tensor t is sharded on")
    # every relation is there, empty ones too, with its declared columns
    assert con.execute("SELECT count(*) FROM final_unreduced").fetchone() == (0,)
    cols = [c[0] for c in con.execute("SELECT * FROM op LIMIT 0").description]
    assert cols == ["op", "op_kind", "op_loc", "kind", "func", "order"]
    cols = [c[0] for c in con.execute("SELECT * FROM op_in LIMIT 0").description]
    assert cols == ["op", "op_kind", "op_loc", "parent", "parent_kind", "parent_loc", "region"]


def test_db_holds_what_the_engine_holds(tmp_path):
    """Every relation's tuples, through the views, equal the engine's."""
    import duckdb
    from sdylog.commands.pipeline import run_pipeline
    run = run_pipeline(str(MLP), name_ids=True)
    db = tmp_path / "r.duckdb"
    run.save_database(str(db))
    con = duckdb.connect(str(db), read_only=True)
    eng = run.result.engine
    for name in eng.relations:
        decl = eng.decl(name)
        cols = ", ".join(f'"{c.name}"' for c in decl.columns) or "holds"
        got = con.execute(f'SELECT {cols} FROM "{name}" ORDER BY ALL').fetchall()
        want = eng.read(name) if decl.arity else ([(True,)] if eng.size(name) else [])
        assert got == want, name
    # then what the reshard rules and their costs derive (their own ids, named by their own tables)
    # (symbol ids of another engine: mapped into the file's one symbol table)
    # (those its programs declare: not the engine's working relations, `live__seed` and such)
    from sdylog.reshard.costs import costs_program
    from sdylog.reshard.driver import reshard_program
    reshard = run.needed.inventory.engine
    declared = {**reshard_program().relations, **costs_program().relations}
    files = {n for (n,) in con.execute("SELECT name FROM relations").fetchall()}
    assert files == set(eng.relations) | set(declared)
    for name in (n for n in reshard.relations if n in declared and n not in eng.relations):
        decl = reshard.decl(name)
        cols = ", ".join(f'"{c.name}"' for c in decl.columns) or "holds"
        want = reshard.read(name) if decl.arity else ([(True,)] if reshard.size(name) else [])
        assert con.execute(f'SELECT {cols} FROM "{name}" ORDER BY ALL').fetchall() == want, name
    assert reshard.read("needed")
    assert con.execute("SELECT DISTINCT o_kind FROM needed").fetchall() == [("stablehlo.dot_general",)]


REASONS = '''
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                %w: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %u: tensor<4x4xf32>) -> (tensor<8x8xf32>, tensor<4x4xf32>, tensor<f32>) {
  %0 = stablehlo.add %a, %b : tensor<8x8xf32>
  %1 = stablehlo.negate %u : tensor<4x4xf32>
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %2 = stablehlo.multiply %0, %w : tensor<8x8xf32>
  return %2, %1, %c : tensor<8x8xf32>, tensor<4x4xf32>, tensor<f32>
}
'''


def test_run_says_why_values_are_left_unsharded(tmp_path):
    p = tmp_path / "r.mlir"
    p.write_text(REASONS)
    quiet = sdylog("run", str(p), "-o", str(tmp_path / "o.mlir"))
    assert "values sharded: 2 of 8\nvalues not sharded: 6 (closed 1, conflict 1, unreached 3, scalar 1)\n" \
        in quiet.stderr
    verbose = sdylog("run", str(p), "-v", "-o", str(tmp_path / "o.mlir")).stderr
    assert "  %arg2 (argument 2 of @main): closed\n" in verbose
    assert f"  %0 (stablehlo.add at {p}:7:8): conflict\n" in verbose
    assert "  %arg3 (argument 3 of @main): unreached\n" in verbose
    assert f"  %1 (stablehlo.negate at {p}:8:8): unreached\n" in verbose
    # (the conflict stopped propagation before it: nothing reaches it)
    assert f"  %2 (stablehlo.multiply at {p}:10:8): unreached\n" in verbose
    assert "%c" not in verbose.split("conflicts:")[0].split("\n", 2)[2]   # scalars are only counted


# as `jax.jit(f).lower(a, b).as_text(debug_info=True)` prints it (f = lambda a, b: a + b)
JAX_LOCATED = '''
#loc1 = loc("a")
#loc2 = loc("b")
module @jit_f {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("a"),
                         %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>} loc("b"))
      -> (tensor<8x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32> loc(#loc5)
    return %0 : tensor<8x8xf32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("/src/model.py":7:11 to :16)
#loc4 = loc("/src/model.py":12:6 to :20)
#loc5 = loc("jit(f)/add"(callsite("f"(#loc3) at "<module>"(#loc4))))
#loc6 = loc("jit(f)"("<module>"(#loc4)))
'''


def test_jax_locations_and_names_everywhere(tmp_path):
    p = tmp_path / "j.mlir"
    p.write_text(JAX_LOCATED)
    run = sdylog("run", str(p), "-v")
    assert ("  /src/model.py:7:11: stablehlo.add [jit(f)/add] factor 0 (diverge): operand 0 dim 0 {\"data\"} "
            "vs operand 1 dim 0 {\"model\"}") in run.stderr
    assert "  %0 (stablehlo.add at /src/model.py:7:11 (jit(f)/add)): conflict" in run.stderr
    rows = json.loads(sdylog("query", str(p), "conflict", "--format", "json").stdout)
    assert rows[0]["op_loc"] == "/src/model.py:7:11 (jit(f)/add)" and rows[0]["t_a_name"] == "a"
    explained = sdylog("explain", str(p), "a").stdout
    assert explained.startswith('a (argument 0 of @main) gets <@mesh, [{"data"}, {}]>')
    assert "    a dim 0 \"data\": user annotation on a (argument 0 of @main) (no priority)" in explained
    result = sdylog("explain", str(p), "result").stdout
    assert result.startswith("result (result 0 of @main) is not sharded")
    assert "stablehlo.add (/src/model.py:7:11 (jit(f)/add))" in result


def test_a_file_written_on_a_thread_is_all_or_nothing(tmp_path):
    from sdylog import outputs
    from sdylog.ir.diagnostics import SdylogError

    def write_parts(p, parts):
        with open(p, "w") as f:
            for part in parts:
                f.write(part)
    out = outputs.plan(str(tmp_path / "a.db"), "--db")
    good = outputs.Background(out)
    good.start(write_parts)
    good.add("da")
    good.add("ta")
    outputs.write_all([(out, good.finish)])
    good.discard()
    assert (tmp_path / "a.db").read_text() == "data"

    def fail(p, parts):
        open(p, "w").write("half")
        raise SdylogError("broken")
    out_b = outputs.plan(str(tmp_path / "b.db"), "--db")
    bad = outputs.Background(out_b)
    bad.start(fail)
    with pytest.raises(SdylogError, match="broken"):
        outputs.write_all([(out_b, bad.finish)])
    bad.discard()
    unused = outputs.Background(outputs.plan(str(tmp_path / "c.db"), "--db"))
    seen = []
    unused.start(lambda p, parts: seen.extend(parts))
    unused.add("first")
    unused.discard()     # (the command failed before write_all: the writer stops where it waits for a part)
    assert seen == ["first"] and not unused.thread.is_alive() and isinstance(unused.error, Exception)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.db"]


def test_a_rewritten_interface_sharding_gets_a_note(tmp_path):
    p = tmp_path / "nd.mlir"
    p.write_text('sdy.mesh @mesh = <["x"=4, "y"=2]>\n'
                 'func.func @main(%a: tensor<10x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})'
                 ' -> tensor<10x16xf32> {\n'
                 '  %0 = stablehlo.negate %a : tensor<10x16xf32>\n  return %0 : tensor<10x16xf32>\n}\n')
    r = sdylog("run", str(p), "-o", str(tmp_path / "o.mlir"))
    assert r.returncode == 0
    assert (f'{p}:2:17: note: the sharding <@mesh, [{{"x"}}, {{"y"}}]> of argument 0 of the entry function became '
            f'<@mesh, [{{"x":(1)2}}, {{"y"}}]>: dim 0 of size 10 does not divide into 4 shards') in r.stderr
    assert r.stderr.count("note:") == 1    # (the result had no sharding of the user's)


def test_db_holds_numbers_beyond_64_bits(tmp_path):
    """A tensor of 2^64 elements: its size is a HUGEINT in the file (2^130: decimal text); its dims
    of 2^32 are exact."""
    import duckdb
    from sdylog.commands.pipeline import run_pipeline
    p = tmp_path / "huge.mlir"
    p.write_text('sdy.mesh @mesh = <["x"=4]>\n'
                 'func.func @main(%a: tensor<4294967296x4294967296xf32> {sdy.sharding = #sdy.sharding<@mesh, '
                 '[{"x"}, {}]>}, %b: tensor<4294967296x4294967296x4294967296x4294967296x4xf32>) '
                 '-> tensor<4294967296x4294967296xf32> {\n'
                 '  %0 = stablehlo.tanh %a : tensor<4294967296x4294967296xf32>\n'
                 '  return %0 : tensor<4294967296x4294967296xf32>\n}\n')
    db = tmp_path / "r.duckdb"
    run_pipeline(str(p), name_ids=True).save_database(str(db))
    con = duckdb.connect(str(db), read_only=True)
    assert {n for (n,) in con.execute("SELECT DISTINCT n FROM tensor_elems").fetchall()} == {str(2 ** 64),
                                                                                             str(2 ** 130)}
    # (sizes beyond 32 bits: tensor_dim's rows in a table of its own, not the 32-bit _rows3)
    assert con.execute("SELECT max(size) FROM tensor_dim").fetchone()[0] == 2 ** 32
    assert con.execute("SELECT DISTINCT t_name FROM tensor_elems ORDER BY ALL").fetchall() == \
        [("%0",), ("%arg0",), ("%arg1",), ("@main:result0",)]


def _file_contents(path) -> dict:
    """Every table and view of a DuckDB file (but the internal _rows<k> and _symbols, which
    number symbols in the order a run met them) with its columns and rows."""
    import duckdb
    con = duckdb.connect(str(path), read_only=True)
    names = [n for (n,) in con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                                       "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    out = {}
    for name in sorted(n for n in names if not n.startswith("_")):
        q = con.execute(f'SELECT * FROM "{name}" ORDER BY ALL')
        out[name] = ([d[0] for d in q.description], q.fetchall())
    return out


def test_db_from_the_cached_schema_holds_what_a_file_made_whole_holds(tmp_path, monkeypatch):
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.datalog import duckdb_file
    run = run_pipeline(str(MLP), name_ids=True)
    run.save_database(str(tmp_path / "whole.duckdb"))       # (mlp's rows: fewer than CACHED_SCHEMA_ROWS)
    monkeypatch.setattr(duckdb_file, "CACHED_SCHEMA_ROWS", 0)
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    for made in ("first.duckdb", "again.duckdb"):          # (the schema file made, then copied)
        run.save_database(str(tmp_path / made))
    assert [p.name.startswith("duckdb-schema-") for p in (tmp_path / "cache").iterdir()] == [True]
    whole = _file_contents(tmp_path / "whole.duckdb")
    assert len(whole) > 500 and whole["final_dim_axis"][1]
    assert _file_contents(tmp_path / "first.duckdb") == whole == _file_contents(tmp_path / "again.duckdb")
    # a damaged schema file is made again
    cached = next((tmp_path / "cache").iterdir())
    cached.write_bytes(b"not a database")
    run.save_database(str(tmp_path / "damaged.duckdb"))
    assert _file_contents(tmp_path / "damaged.duckdb") == whole
    run.save_database(str(tmp_path / "remade.duckdb"))
    assert cached.stat().st_size > 100_000 and _file_contents(tmp_path / "remade.duckdb") == whole
    # without a cache folder, or one where no file can be made, the file is made whole
    for folder in (None, str(tmp_path / "whole.duckdb" / "cache")):
        monkeypatch.setattr("sdylog.datalog.cache.cache_dir", lambda: folder)
        run.save_database(str(tmp_path / "uncached.duckdb"))
        assert _file_contents(tmp_path / "uncached.duckdb") == whole
        (tmp_path / "uncached.duckdb").unlink()


# ---------------------------------------------------------------- every run's relations, one name each
# Relations two runs declare apart (not rules/schema.dl's, which each run has of its own): the
# later run's would be out of `query`'s and the --db file's reach.


def test_each_relation_name_is_declared_once_across_the_runs():
    from sdylog.commands.relations import RUNS, run_programs
    from sdylog.datalog.docs import relation_docs
    runs: dict = {}     # name -> {run: where it is declared}  (the costs program declares `needed` again: one run)
    for run in RUNS:
        for program in run_programs(run):
            for name, doc in relation_docs(program).items():
                runs.setdefault(name, {}).setdefault(run, doc.where)
    shared = {n for n, w in runs.items() if len(w) > 1}
    assert {n: runs[n] for n in shared if any(not w.startswith("schema.dl:") for w in runs[n].values())} == {}
    assert {"op", "value", "value_dim", "rule_tensor"} <= shared


def test_query_list_names_every_relation_query_reads(tmp_path):
    """`--list` lists the MPMD rules' relations too, each once; every one
    listed is one `query` reads, from the run that declares it."""
    from sdylog.commands.relations import RUNS, relation_run, run_programs
    rows = json.loads(sdylog("query", "--list", "--format", "json").stdout)
    names = [r["relation"] for r in rows]
    assert len(names) == len(set(names))
    declared = set().union(*(p.relations for run in RUNS for p in run_programs(run)))
    assert set(names) == declared
    by_name = {r["relation"]: r for r in rows}
    assert by_name["placed"]["columns"] == "op: Op, d: Device" and by_name["placed"]["doc"].startswith("`op` runs on")
    assert by_name["merged_transfer"]["declared_at"].startswith("mpmd/merge.dl:")
    assert by_name["merged"]["declared_at"].startswith("reshard/axes.dl:")   # (not mpmd's any more)
    assert relation_run("placed", lambda: False) == "mpmd"
    assert relation_run("needed", lambda: False) == "reshard"
    assert relation_run("op", lambda: False) == "propagation" and relation_run("op", lambda: True) == "mpmd"
    assert relation_run("no_such", lambda: False) is None


def test_db_file_documents_the_relations_query_lists(tmp_path):
    """The --db file's `relations` table holds what `query --list` says of
    the propagation and reshard runs' relations, word for word (run --db
    writes no MPMD run)."""
    import duckdb
    db = tmp_path / "rel.duckdb"
    p = sdylog("run", str(MLP), "-q", "-o", str(tmp_path / "out.mlir"), "--db", str(db))
    assert p.returncode == 0, p.stderr
    con = duckdb.connect(str(db), read_only=True)
    table = {n: (k, d) for n, k, d in con.execute("SELECT name, kind, doc FROM relations").fetchall()}
    listed = {r["relation"]: (r["kind"], r["doc"])
              for r in json.loads(sdylog("query", "--list", "--format", "json").stdout)
              if not r["declared_at"].startswith("mpmd/")}
    assert table == listed


def test_query_reads_an_mpmd_modules_own_facts(tmp_path):
    """On a module that places ops on devices (propagation refuses it),
    rules/schema.dl's relations are the MPMD run's, and `--list FILE`
    lists that run's relations with their sizes."""
    from tests.mpmd import test_scenarios as s
    src = tmp_path / "s15.mlir"
    src.write_text(s.S15)
    p = sdylog("query", str(src), "op", "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert [line.split(",")[1] for line in p.stdout.splitlines()[1:]] == [
        "func.func", "stablehlo.constant", "stablehlo.multiply", "stablehlo.add", "stablehlo.exponential",
        "func.return"]
    rows = {r["relation"]: r for r in json.loads(sdylog("query", str(src), "--list", "--format", "json").stdout)}
    assert rows["placed"]["rows"] == 4 and rows["op"]["rows"] == 6 and "final_dim_axis" not in rows
    # on an SPMD module, the MPMD run's relations are listed with their sizes beside propagation's
    rows = {r["relation"]: r for r in json.loads(sdylog("query", str(MLP), "--list", "--format", "json").stdout)}
    assert rows["placed"]["rows"] == 6 and rows["op"]["rows"] == 12 and rows["needed"]["rows"] == 2


def test_query_list_of_a_module_the_mpmd_rules_refuse_lists_their_relations_without_sizes(tmp_path):
    """A shard_map cannot be partitioned MPMD: `--list FILE` still lists
    every relation, the MPMD rules' without a size."""
    src = tmp_path / "sm.mlir"
    src.write_text('''sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
      manual_axes={"x"} (%b: tensor<4xf32>) {
    %1 = stablehlo.negate %b : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
''')
    p = sdylog("query", str(src), "--list", "--format", "json")
    assert p.returncode == 0, p.stderr
    rows = {r["relation"]: r for r in json.loads(p.stdout)}
    assert rows["placed"]["rows"] is None and rows["op"]["rows"] > 0
    assert "shard_map" in sdylog("query", str(src), "placed").stderr
