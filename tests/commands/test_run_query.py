"""`sdylog run` and `sdylog query` on a small model of our own."""
import subprocess
import sys

import pytest

MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def sdylog(*args):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True)


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
    assert header.split() == ["t", "d", "pos", "axis", "pre_size", "size"]
    assert rows[-1].startswith("final_dim_axis: ") and "(filtered)" in rows[-1]
    assert all(r.split()[3] == "y" for r in rows[:-1] if r.strip())


def test_query_errors(model):
    p = sdylog("query", str(model), "no_such_relation")
    assert p.returncode == 1 and "unknown relation 'no_such_relation'" in p.stderr
    p = sdylog("query", str(model), "final_dim_axis", "--where", "nope=1")
    assert p.returncode == 1 and "has no column 'nope'" in p.stderr
