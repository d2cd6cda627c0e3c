"""`sdylog run` and `sdylog query` on a small model of our own."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def sdylog(*args, env=None):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "m.mlir"
    p.write_text(MODULE)
    return p


def test_run_prints_module_and_report(model):
    p = sdylog("run", str(model))
    assert p.returncode == 0, p.stderr
    assert 'stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>}' in p.stdout
    assert "values sharded:" in p.stderr and "time:" in p.stderr


def test_run_writes_output_and_database(model, tmp_path):
    import duckdb

    out, db = tmp_path / "out.mlir", tmp_path / "rel.duckdb"
    p = sdylog("run", str(model), "-o", str(out), "--db", str(db), "-q")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == ""
    assert "sdy.sharding" in out.read_text()
    con = duckdb.connect(str(db), read_only=True)
    axes = con.execute("SELECT DISTINCT axis FROM final_dim_axis ORDER BY axis").fetchall()
    assert axes == [("x",), ("y",)]
    assert con.execute("SELECT count(*) FROM op").fetchone()[0] > 0  # inputs are saved too


HUGE = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<4294967296x4294967296xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<4294967296x4294967296x4294967296x4294967296x4xf32>) -> tensor<4294967296x4294967296xf32> {
  %0 = stablehlo.tanh %a : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}
"""


@pytest.mark.parametrize("huge_too, sizes", [(False, {2 ** 64}), (True, {str(2 ** 64), str(2 ** 130)})])
def test_database_holds_the_sizes_of_tensors_of_2_to_the_63_elements_and_more(tmp_path, huge_too, sizes):
    """Sizes beyond 64 bits are HUGEINT; a column holding one beyond 128 bits is decimal text."""
    import duckdb

    from sdylog.commands.pipeline import run_pipeline

    model, db = tmp_path / "huge.mlir", tmp_path / "rel.duckdb"
    model.write_text(HUGE if huge_too else re.sub(r",\n +%b: [^)]*", "", HUGE))
    run_pipeline(str(model)).result.engine.save(str(db))       # (what `run --db` saves)
    con = duckdb.connect(str(db), read_only=True)
    assert {n for (n,) in con.execute("SELECT DISTINCT n FROM tensor_elems").fetchall()} == sizes
    assert con.execute("SELECT count(*) FROM tensor_dim").fetchone()[0] > 0


def test_run_bad_input_leaves_no_files(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %0 = stablehlo.foo : () -> ()\n}\n")
    out, db = tmp_path / "out.mlir", tmp_path / "rel.duckdb"
    p = sdylog("run", str(bad), "-o", str(out), "--db", str(db))
    assert p.returncode == 1 and p.stderr.startswith(f"{bad}:2:8: error:")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.mlir"]


def test_query_prints_a_filtered_table(model):
    p = sdylog("query", str(model), "final_dim_axis", "--where", "axis=y")
    assert p.returncode == 0, p.stderr
    header, rule, *rows = p.stdout.splitlines()
    assert header.split() == ["t", "t_name", "d", "pos", "axis", "pre_size", "size"]
    assert rows[-1].startswith("final_dim_axis: ") and "(filtered)" in rows[-1]
    assert rows[:-1] and all(r.split()[4] == "y" for r in rows[:-1] if r.strip())


def test_query_prints_the_same_table_with_relations_in_c_and_in_python(model):
    tables = {n: sdylog("query", str(model), "final_dim_axis", env={"SDYLOG_NATIVE": n}) for n in ("1", "0")}
    assert all(p.returncode == 0 for p in tables.values()), [p.stderr for p in tables.values()]
    assert tables["1"].stdout == tables["0"].stdout


def test_query_errors(model):
    p = sdylog("query", str(model), "no_such_relation")
    assert p.returncode == 1 and "unknown relation 'no_such_relation'" in p.stderr
    p = sdylog("query", str(model), "final_dim_axis", "--where", "nope=1")
    assert p.returncode == 1 and "has no column 'nope'" in p.stderr


# ---------------------------------------------------------------- conflicts in the report
# Operands sharded on different axes in the same dimension: the add's factor 0
# diverges between them ("x" against "y", Shardy's conflict), and the result,
# which takes neither, lacks each ("prefix").
DIVERGING = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %a, %b : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""

# A closed dimension stops "y" from reaching the dot's lhs contracting
# dimension, and main's closed result stops "x": two "prefix" conflicts.
CLOSED = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""

# A manual computation on "x": the body sees local shardings (no "x"), which
# is no conflict; the closed sharding of the negate stops "y" inside the body
# (at the negate, and at the result edge against the out sharding).
MANUAL = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
    %1 = stablehlo.negate %arg1 NEGATE_SHARDING: tensor<4x16xf32>
    sdy.return %1 : tensor<4x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.tanh %0 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
"""


def _pipeline(tmp_path, text, name="m.mlir"):
    from sdylog.commands.pipeline import run_pipeline
    p = tmp_path / name
    p.write_text(text)
    return run_pipeline(str(p))


def test_run_verbose_lists_conflicts_with_locations(tmp_path):
    p = tmp_path / "d.mlir"
    p.write_text(DIVERGING)
    r = sdylog("run", str(p), "-v")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert "conflicts: 3 (at 1 op)" in lines
    assert f'  {p}:5:8: stablehlo.add factor 0 (diverge): operand 0 dim 0 {{"x"}} vs operand 1 dim 0 {{"y"}}' in lines
    assert f'  {p}:5:8: stablehlo.add factor 0 (prefix): operand 0 dim 0 {{"x"}} vs result 0 dim 0 {{}}' in lines
    assert f'  {p}:5:8: stablehlo.add factor 0 (prefix): operand 1 dim 0 {{"y"}} vs result 0 dim 0 {{}}' in lines
    quiet = sdylog("run", str(p))   # without -v: the count only
    assert "conflicts: 3 (at 1 op)" in quiet.stderr and "(diverge)" not in quiet.stderr


def test_no_conflicts_when_every_factor_agrees(tmp_path):
    from sdylog.commands.pipeline import report
    run = _pipeline(tmp_path, MODULE)
    assert run.result.engine.size("conflict") == 0 and run.conflicts == []
    assert "conflicts: 0 (at 0 ops)" in report(run, verbose=True).splitlines()


def test_conflicts_where_closed_dimensions_stop_propagation(tmp_path):
    run = _pipeline(tmp_path, CLOSED)
    rows = run.result.engine.read("conflict")
    # (op name, factor, kind, a, dim_a, b, dim_b): the dot's contracting factor 2
    # and main's result link (-1).
    assert sorted((r[1], r[2], r[3], r[4], r[6], r[7], r[9]) for r in rows) == [
        ("func.return", 0, "prefix", "operand 0", 0, "result 0", 0),
        ("stablehlo.dot_general", 2, "prefix", "operand 0", 1, "operand 1", 0)]
    assert [str(c).split(": ", 1)[1] for c in run.conflicts] == [
        'stablehlo.dot_general factor 2 (prefix): operand 0 dim 1 {} vs operand 1 dim 0 {"y"}',
        'func.return (@main result 0) factor 0 (prefix): operand 0 dim 0 {"x"} vs result 0 dim 0 {}']
    assert [c.location.rsplit("/", 1)[1] for c in run.conflicts] == ["m.mlir:6:8", "m.mlir:8:3"]


def test_manual_axes_are_no_conflict(tmp_path):
    run = _pipeline(tmp_path, MANUAL.replace("NEGATE_SHARDING", ""))
    assert run.result.engine.size("conflict") == 0
    closed = '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} '
    run = _pipeline(tmp_path, MANUAL.replace("NEGATE_SHARDING", closed))
    got = sorted((c.op_name, c.factor, c.kind, c.a, c.b) for c in run.conflicts)
    assert got == [("sdy.data_flow_edge (sdy.manual_computation result 0)", 1, "prefix", "operand 0 dim 1 {}",
                    'result 0 dim 1 {"y"}'),
                   ("stablehlo.negate", 1, "prefix", 'operand 0 dim 1 {"y"}', "result 0 dim 1 {}")]



def test_edge_conflicts_name_the_owner_op_not_its_symbol(tmp_path):
    # (a named computation's OpView has `name`, its name attribute: "nc")
    named = (MANUAL.replace('sdy.manual_computation(%a)', 'sdy.named_computation<"nc">(%a)')
             .replace(' manual_axes={"x"}', '').replace("tensor<4x16xf32>", "tensor<8x16xf32>"))
    closed = '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} '
    # (the argument's dimension 1 closed unsharded: a conflict on the body argument's edge too)
    named = named.replace('%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}',
                          '%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}')
    run = _pipeline(tmp_path, named.replace("NEGATE_SHARDING", closed))
    got = sorted({c.op_name for c in run.conflicts if c.op_name.startswith("sdy.data_flow_edge")})
    assert got == ["sdy.data_flow_edge (sdy.named_computation block argument 0)",
                   "sdy.data_flow_edge (sdy.named_computation result 0)"]

def test_query_conflict_table(tmp_path):
    p = tmp_path / "c.mlir"
    p.write_text(CLOSED)
    r = sdylog("query", str(p), "conflict", "--where", "op_name=stablehlo.dot_general")
    assert r.returncode == 0, r.stderr
    header, _rule, row, last = r.stdout.splitlines()
    assert header.split() == ["op", "op_kind", "op_loc", "op_name", "factor", "kind", "a", "t_a", "t_a_name",
                              "dim_a", "b", "t_b", "t_b_name", "dim_b"]
    assert row.split()[1:7] == ["stablehlo.dot_general", f"{p}:6:8", "stablehlo.dot_general", "2", "prefix",
                                "operand"]
    assert last == "conflict: 1 tuple (filtered)"


@pytest.mark.parametrize("report,readers", [("conflicts.dl", {"unsharded.dl"}), ("unsharded.dl", set())])
def test_propagation_does_not_read_the_report_relations(report, readers):
    """conflicts.dl and unsharded.dl only report: no rule file but the
    reports name their relations."""
    import re

    from sdylog import RULES_DIR
    own = (RULES_DIR / "propagation" / report).read_text()
    declared = set(re.findall(r"^\.decl (\w+)", own, re.M))
    assert declared
    for f in RULES_DIR.rglob("*.dl"):
        if f.name != report and f.name not in readers:
            code = re.sub(r"//.*", "", f.read_text())
            used = set(re.findall(r"\b(\w+)\s*\(", code))
            assert not (declared & used), f"{f} reads {declared & used}"


def test_run_prints_what_opt_pipeline_prints(tmp_path):
    """`sdylog run` runs the pipeline phase by phase: the same module as
    `sdylog opt -sdy-propagation-pipeline`."""
    from sdylog.ir import load_module, print_module
    from sdylog.passes import PassContext, lookup
    run = _pipeline(tmp_path, CLOSED)
    module = load_module(str(tmp_path / "m.mlir"))
    with module.context:
        lookup("sdy-propagation-pipeline").load()(module, {"dedup-functions-fully": False}, PassContext())
    assert run.text() == print_module(module)



# A dot whose tensors shard "x" on different dimensions (golden/dot_conflicts):
# the full version reshards both operands and all-reduces over "y".
DOT_CONFLICT = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%lhs: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %rhs: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def test_run_reports_reshards_and_all_reduces(model, tmp_path):
    p = sdylog("run", str(model))
    assert "reshards needed: 0\nall-reduces needed: 0\n" in p.stderr, p.stderr
    dot = tmp_path / "d.mlir"
    dot.write_text(DOT_CONFLICT)
    report = tmp_path / "r.json"
    p = sdylog("run", "-v", str(dot), "--report", str(report), "-o", str(tmp_path / "o.mlir"))
    assert p.returncode == 0, p.stderr
    assert "reshards needed: 2, 48 B per device\n" in p.stderr, p.stderr
    assert "all-reduces needed: 1, 128 B per device\n" in p.stderr
    assert ('d.mlir:6:8: stablehlo.dot operand 0: reshard [{"x"}, {"y"}] -> [{}, {"y"}], 48 B per device\n'
            in p.stderr)
    import json
    data = json.loads(report.read_text())
    assert set(data) >= {"values", "sharded", "unsharded", "conflicts", "reshards", "collectives", "totals"}
    assert [c["kind"] for c in data["collectives"]] == ["all_reduce"]
    assert data["totals"]["all_reduce"] == {"count": 1, "written_by_export": 0, "bytes_per_device": 128}
    assert data["reshards"][1] == {
        "kind": "reshard", "op": "stablehlo.dot", "location": f"{dot}:6:8", "place": "operand", "index": 1,
        "mesh": "mesh", "from_sharding": '[{"y"}, {}]', "to_sharding": '[{"y"}, {"x"}]', "axes": None,
        "bytes_per_device": 0, "to_mesh": None}
    assert {v["name"] for v in data["values"]} >= {"%arg0", "%arg1", "%0"}
    assert len(data["conflicts"]) == 2


def test_api_lists_reshards_and_collectives():
    import sdylog
    result = sdylog.propagate(DOT_CONFLICT)
    assert [c.kind for c in result.collectives] == ["all_reduce"] and len(result.reshards) == 2
    assert result.collectives[0].axes == '{"y"}' and result.collectives[0].bytes_per_device == 128


def test_query_reads_the_reshard_rules(tmp_path):
    """The full version's relations on the module the pipeline leaves, with
    op names and locations beside the op ids."""
    dot = tmp_path / "d.mlir"
    dot.write_text(DOT_CONFLICT)
    p = sdylog("query", str(dot), "greedy_choice", "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["o,o_kind,o_loc,f,p,axis,pre,size",
                                     f"1,stablehlo.dot,{dot}:6:8,1,0,x,1,4", f"1,stablehlo.dot,{dot}:6:8,2,0,y,1,2"]
    p = sdylog("query", str(dot), "needed", "--format", "csv")
    assert p.stdout.splitlines() == [
        "o,o_kind,o_loc,step,i,kind,place,v,v_name",
        f"1,stablehlo.dot,{dot}:6:8,operand_reshard,0,reshard,operand,0,%arg0",
        f"1,stablehlo.dot,{dot}:6:8,operand_reshard,1,reshard,operand,1,%arg1",
        f"1,stablehlo.dot,{dot}:6:8,result_all_reduce,0,all_reduce,result,2,%0"], p.stdout
    p = sdylog("query", str(dot), "needed_kind_bytes", "--format", "csv")
    assert sorted(p.stdout.splitlines()) == ["all_reduce,128", "kind,bytes", "reshard,48"]
    p = sdylog("query", "--list")
    assert "reshard_operand(o: Op, i: number)" in p.stdout and "final_dim_axis(" in p.stdout
    assert "needed_total_bytes(bytes: number)" in p.stdout and "why_pick(" in p.stdout


# What Shardy's reshard pass rejects, and an op the rule registry does not know.
# (Shardy's passes do not reject the latter: jaxlib's -sdy-propagation-pipeline and
# -sdy-insert-explicit-reshards=enable-full-version=true print unknown_op back unchanged,
# exit 0, after a warning; sdylog's reshard step rejects it because reshard/driver.py
# evaluate() defaults to strict_rules=True. stablehlo.einsum, the op of this case before,
# has the rule of its dot_general now: tests/oprules/test_legalized_ops.py.)
REJECTED = {
    "single_device_argument": ("""sdy.mesh @one = <[], device_ids=[0]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@one, []>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""", ":2:1: error: 'func.func' op function argument 0 cannot have a single-device (maximal) sharding attribute"),
    "unknown_op": ("""sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %s: tensor<6xf32>) -> tensor<8x6xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%a, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<8x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return %0#0 : tensor<8x6xf32>
}
""", ":3:10: error: op 'stablehlo.batch_norm_training' is unknown to SDY sharding rule registry"),
    # (Shardy stops on a failed check: "source and user shardings have different meshes for unreduced axes")
    "unreduced_onto_another_mesh": ("""sdy.mesh @mesh = <["x"=2, "y"=2]>
sdy.mesh @other = <["a"=4]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"a"}, {}]>}) {
  return %a : tensor<8x8xf32>
}
""", ":5:3: error: 'func.return' op: operand 0 has unreduced axes and is brought to a sharding on another mesh"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_run_of_a_module_the_reshard_pass_rejects_writes_nothing(tmp_path, case):
    text, message = REJECTED[case]
    src = tmp_path / "m.mlir"
    src.write_text(text)
    out, report, db = tmp_path / "o.mlir", tmp_path / "r.json", tmp_path / "r.duckdb"
    p = sdylog("run", str(src), "-o", str(out), "--report", str(report), "--db", str(db))
    assert p.returncode == 1 and f"{src}{message}" in p.stderr, p.stderr
    # (the --db thread had propagation's part when the reshard step failed: its file is gone too)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.mlir"]


def test_run_pipeline_starts_the_database_once_the_module_is_imported(model, monkeypatch):
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.passes import propagation_pipeline
    from sdylog.progress import Progress
    seen = []

    class Steps(Progress):
        def step(self, name):
            seen.append(name)
    import_phase = propagation_pipeline.import_phase
    monkeypatch.setattr(propagation_pipeline, "import_phase",
                        lambda *a: (import_phase(*a), seen.append("import passes done"))[0])
    run_pipeline(str(model), progress=Steps(False), on_imported=lambda: seen.append("hook: imported"),
                 on_propagated=lambda result, named: seen.append("hook: propagated"), export=False)
    assert seen == ["parse", "import", "import passes done", "hook: imported", "propagation", "hook: propagated"]


def test_run_pipeline_decides_reshards_from_the_facts_it_followed(tmp_path, monkeypatch):
    """With reshards=True (`sdylog run`) the reshard step reads the facts
    propagation extracted, followed across the export: one extraction per
    run instead of two, and the same reshards as a run deciding them later
    from facts of its own."""
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.facts import shared
    calls = []
    real = shared.extract_facts
    monkeypatch.setattr(shared, "extract_facts", lambda *a, **k: calls.append(1) or real(*a, **k))
    dot = tmp_path / "d.mlir"
    dot.write_text(DOT_CONFLICT)
    later = run_pipeline(str(dot)).needed.items
    assert len(calls) == 2 and len(later) == 3
    calls.clear()
    within = run_pipeline(str(dot), reshards=True)
    assert len(calls) == 1
    assert within.needed.items == later


SHARED_CONSTANT = """
sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %c, %a : tensor<8xf32>
  %1 = stablehlo.multiply %c, %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def test_database_names_the_reshard_ids_left_after_the_export_erased_ops(tmp_path):
    """The export merges the copies of %c the import made: the reshard
    rules' facts, followed from propagation's, keep their ids with a gap
    where the copy was. The --db file names every id the rows hold, and
    none of the erased."""
    import duckdb
    model, db = tmp_path / "c.mlir", tmp_path / "c.duckdb"
    model.write_text(SHARED_CONSTANT)
    p = sdylog("run", str(model), "-q", "-o", str(tmp_path / "o.mlir"), "--db", str(db))
    assert p.returncode == 0, p.stderr
    con = duckdb.connect(str(db), read_only=True)
    ops = con.execute("select id, kind from reshard_op_names where id >= 0 order by id").fetchall()
    values = [v for v, in con.execute("select id from reshard_value_names order by id").fetchall()]
    assert ops and all(kind for _, kind in ops) and "sdy.constant" in {k for _, k in ops}
    assert len(ops) < 1 + max(o for o, _ in ops) and len(values) < 1 + max(values)   # (the gaps)


def test_one_naming_serves_the_reshard_ids_when_their_facts_followed_propagations(tmp_path, monkeypatch):
    """The export erased a copy of %c; the reshard step's facts followed
    propagation's across it (the same ids, with a gap): propagation's names
    serve them, without the erased ids, as a naming of their own names them
    here (this input has no value the import merged, whose names would
    differ). Facts extracted afresh number ids otherwise: not served."""
    from sdylog.commands import values
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.facts.extract import extract_facts
    made = []
    init = values.IdNames.__init__
    monkeypatch.setattr(values.IdNames, "__init__", lambda self, *a, **k: made.append(1) or init(self, *a, **k))
    model = tmp_path / "c.mlir"
    model.write_text(SHARED_CONSTANT)
    run = run_pipeline(str(model), name_ids=True, reshards=True)
    facts = run.needed.inventory.facts
    assert any(v is None for v in facts.values) and run.names.all_values() != run.reshard_names.all_values()
    assert len(made) == 1
    own = values.IdNames(facts, *run.inputs[:2], run.ctx.filename, run.inputs[2])
    assert run.reshard_names.all_values() == own.all_values() and run.reshard_names.all_ops() == own.all_ops()
    assert run.names.following(extract_facts(run.module, run.ctx.filename)) is None


def test_report_counts_what_the_export_step_wrote(tmp_path):
    """-sdy-propagation-pipeline's own reshard step writes the reshard of a
    returned value (golden/function_results); the full version adds its own."""
    import sdylog as api
    result = api.propagate((ROOT / "golden" / "function_results.in.mlir").read_text())
    places = sorted(r.place for r in result.reshards)
    assert places == ["use", "written"], places
    assert all(r.bytes_per_device == 192 for r in result.reshards)
