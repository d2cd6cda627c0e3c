"""`sdylog datalog PROGRAM -F FACTS -D OUT`, as the souffle command."""
from click.testing import CliRunner

from sdylog.cli import main

PROGRAM = """
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.output path
.decl label(n: symbol, w: float)
.output label(IO=stdout)
.printsize path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
label(cat("n", to_string(x)), to_float(x) / 3.0) :- edge(x, _), x < 2.
"""


def setup(tmp_path, facts="1\t2\n2\t3\n"):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "edge.facts").write_text(facts)
    (tmp_path / "out").mkdir()


def run(tmp_path, *args):
    return CliRunner().invoke(main, ["datalog", str(tmp_path / "p.dl"), "-F", str(tmp_path / "in"),
                                     "--engine", "memory", *args])


def test_writes_csv_files_and_prints_stdout_outputs(tmp_path):
    setup(tmp_path)
    res = run(tmp_path, "-D", str(tmp_path / "out"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n2\t3\n"
    assert res.output == "path\t3\n---------------\nlabel\n===============\nn1\t0.333333\n===============\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["path.csv"]


def test_dash_prints_every_output(tmp_path):
    setup(tmp_path)
    res = run(tmp_path, "-D", "-")
    assert res.exit_code == 0, res.output
    assert "---------------\npath\n===============\n1\t2\n1\t3\n2\t3\n===============\n" in res.output


def test_bad_facts_exit_1_with_location_and_no_output_files(tmp_path):
    setup(tmp_path, facts="1\t2\n2\tx\n")
    res = run(tmp_path, "-D", str(tmp_path / "out"))
    assert res.exit_code == 1
    assert res.output.startswith(f"{tmp_path / 'in' / 'edge.facts'}:2:3: error: facts of 'edge': "
                                 "cannot read 'x' as a number")
    assert list((tmp_path / "out").iterdir()) == []


def test_program_errors_exit_1_with_file_line_col(tmp_path):
    setup(tmp_path)
    (tmp_path / "p.dl").write_text(PROGRAM + "path(x) :- edge(x, _).\n")
    res = run(tmp_path, "-D", str(tmp_path / "out"))
    assert res.exit_code == 1
    assert res.output.endswith("p.dl:12:1: error: 'path' has 2 columns, used here with 1\n")
    assert list((tmp_path / "out").iterdir()) == []


def test_missing_facts_file(tmp_path):
    setup(tmp_path)
    (tmp_path / "in" / "edge.facts").unlink()
    res = run(tmp_path, "-D", str(tmp_path / "out"))
    assert res.exit_code == 1 and "cannot open fact file" in res.output


def test_relations_in_c_and_in_python_write_the_same_files(tmp_path):
    """(SDYLOG_ENGINE=memory made `sdylog datalog` fail: the memory engine
    reads facts files too.)"""
    setup(tmp_path, facts="1\t2\n2\t3\n3\t4\n")
    printed = {}
    for mode, env in (("c", {"SDYLOG_ENGINE": "memory"}), ("python", {"SDYLOG_NATIVE": "0"})):
        out = tmp_path / f"out-{mode}"
        out.mkdir()
        res = CliRunner().invoke(main, ["datalog", str(tmp_path / "p.dl"), "-F", str(tmp_path / "in"),
                                        "-D", str(out)], env=env)
        assert res.exit_code == 0, res.output
        printed[mode] = res.output
    assert printed["c"] == printed["python"]
    assert (tmp_path / "out-c" / "path.csv").read_text() == (tmp_path / "out-python" / "path.csv").read_text()


def test_duckdb_is_no_engine(tmp_path):
    """DuckDB is the format of --db files, not an engine: asking for it names the engines there are."""
    setup(tmp_path)
    res = run(tmp_path, "--engine", "duckdb")
    assert res.exit_code == 2 and "'duckdb' is not one of 'memory', 'souffle'" in res.output, res.output
    res = CliRunner().invoke(main, ["datalog", str(tmp_path / "p.dl"), "-F", str(tmp_path / "in"), "-D", "-"],
                             env={"SDYLOG_ENGINE": "duckdb"})
    assert (res.exit_code, res.output) == (1, "error: unknown Datalog engine 'duckdb' (from SDYLOG_ENGINE): "
                                              "choose from memory, souffle\n")
