"""The engine's Python API: facts in from Python columns, several runs over
one database, saving, tables, explanations; relations held in C and in
Python alike."""
import duckdb
import numpy as np
import pyarrow as pa
import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.table import render, select
from sdylog.ir.diagnostics import SdylogError

TC = parse_program("""
.decl edge(src: number, dst: number)
.input edge
.decl path(src: number, dst: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
""", "tc.dl")


@pytest.fixture(autouse=True, params=["c", "python"])
def held_in(request, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if request.param == "python" else "1")


def engine(program=TC, **kw):
    return make_engine(program, "memory", **kw)


@pytest.mark.parametrize("data", [
    [(1, 2), (2, 3), (1, 2)],
    {"src": np.array([1, 2], dtype=np.int32), "dst": np.array([2, 3], dtype=np.int64)},
    np.array([[1, 2], [2, 3]]),
    pa.table({"a": [1, 2], "b": [2, 3]}),
])
def test_facts_from_python_columns(data):
    with engine() as e:
        e.load("edge", data)
        e.run()
        assert e.read("path") == [(1, 2), (1, 3), (2, 3)]
        assert e.read_columns("path")["dst"].tolist() == [2, 3, 3]


def test_bad_facts_are_errors():
    with engine() as e:
        with pytest.raises(SdylogError, match="column 'dst' must hold number values"):
            e.load("edge", [(1, "x")])
        with pytest.raises(SdylogError, match="has 3 values, the relation has 2 columns"):
            e.load("edge", [(1, 2, 3)])
        with pytest.raises(SdylogError, match="unknown relation 'nope'"):
            e.load("nope", [])


def test_replace_an_input_and_run_again():
    with engine() as e:
        e.load("edge", [(1, 2), (2, 3)])
        e.run()
        assert e.size("path") == 3
        e.replace("edge", [(5, 6)])
        e.run()
        assert e.read("path") == [(5, 6)]


def test_second_program_over_the_same_database_and_subsets():
    second = parse_program("""
.decl path(src: number, dst: number)
.decl far(src: number)
.decl unused(x: number)
far(x) :- path(x, y), y - x >= 2.
unused(1).
""", "second.dl")
    with engine() as e:
        e.load("edge", [(1, 2), (2, 3), (3, 4)])
        e.run()
        e.run(second, relations=["far", "path"])
        assert e.read("far") == [(1,), (2,)]
        assert e.read("path")[-1] == (3, 4)   # untouched: second reads it
        with pytest.raises(SdylogError, match="'unused' was not kept"):
            e.read("unused")                  # (not asked for: not evaluated)
    mismatch = parse_program(".decl path(a: symbol, b: symbol)\n.decl q(a: symbol)\nq(a) :- path(a, _).\n")
    with engine() as e:
        with pytest.raises(SdylogError, match="declared with column types"):
            e.run(mismatch)


def test_relation_both_loaded_and_derived_keeps_its_facts_across_runs():
    p = parse_program(".decl r(x: number)\n.input r\nr(x + 1) :- r(x), x < 3.\nr(10).\n")
    with engine(p) as e:
        e.load("r", [(0,)])
        e.run()
        e.run()
        assert e.read("r") == [(0,), (1,), (2,), (3,), (10,)]


def test_save_writes_every_relation_with_declared_column_names(tmp_path):
    with engine() as e:
        e.load("edge", [(1, 2), (2, 3)])
        e.run()
        path = tmp_path / "out.duckdb"
        e.save(str(path))
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT src, dst FROM path ORDER BY ALL").fetchall() == [(1, 2), (1, 3), (2, 3)]
    assert con.execute("SELECT count(*) FROM edge").fetchone() == (2,)


def test_save_keeps_symbols_floats_big_numbers_and_nullary_relations(tmp_path):
    p = parse_program(".decl name(n: symbol, w: float)\n.decl big(x: number)\n.decl any_name()\n"
                      "any_name() :- name(_, _).\nbig(x * x) :- name(_, _), x = 4294967296.\n", "p.dl")
    with engine(p) as e:
        e.load("name", [("a b", 0.5), ("c", -1.25)])
        e.run()
        e.save(str(tmp_path / "out.duckdb"))
    con = duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True)
    assert con.execute("SELECT n, w FROM name ORDER BY ALL").fetchall() == [("a b", 0.5), ("c", -1.25)]
    assert con.execute("SELECT x FROM big").fetchall() == [(2 ** 64,)]
    assert con.execute("SELECT count(*) FROM any_name").fetchone() == (1,)
    assert con.execute("SELECT rows FROM relations WHERE name = 'any_name'").fetchone() == (1,)


def test_select_with_filters_rendered_as_a_table():
    with engine() as e:
        e.load("edge", [(1, 2), (2, 3), (10, 3)])
        e.run()
        text = render(select(e, "path", ["dst=3"]))
        assert text.splitlines() == ["src  dst", "---  ---", "  1    3", "  2    3", " 10    3",
                                     "path: 3 tuples (filtered)"]
        with pytest.raises(SdylogError, match="'path' has no column 'x'"):
            select(e, "path", ["x=1"])
        with pytest.raises(SdylogError, match="holds number values, given 'a'"):
            select(e, "path", ["src=a"])


def test_explain_prints_the_derivation_tree():
    with engine(provenance=True) as e:
        e.load("edge", [(1, 2), (2, 3), (3, 4), (4, 1)])
        e.run()
        tree = e.explain("path", (1, 4))
        assert tree.format() == (
            "path(1, 4)    [rule tc.dl:7]\n"
            "├── path(1, 3)    [rule tc.dl:7]\n"
            "│   ├── path(1, 2)    [rule tc.dl:6]\n"
            "│   │   └── edge(1, 2)    [input]\n"
            "│   └── edge(2, 3)    [input]\n"
            "└── edge(3, 4)    [input]\n")
        with pytest.raises(SdylogError, match=r"path\(9, 9\) is not in the database"):
            e.explain("path", (9, 9))


def test_explain_negation_aggregate_and_arithmetic():
    p = parse_program("""
.decl n(x: number)
.decl big(x: number)
.decl c(x: number, k: number)
n(1). n(2). n(5).
big(x) :- n(x), !n(x + 1), x > 1.
c(x, k) :- big(x), k = count : { n(y), y < x }.
""", "agg.dl")
    with engine(p, provenance=True) as e:
        e.run()
        assert e.read("c") == [(2, 1), (5, 2)]
        assert e.explain("c", (5, 2)).format() == (
            "c(5, 2)    [rule agg.dl:7]\n"
            "├── big(5)    [rule agg.dl:6]\n"
            "│   ├── n(5)    [fact agg.dl:5]\n"
            "│   ├── !n(5 + 1)\n"
            "│   └── 5 > 1\n"
            "└── 2 = count : { n(y), y < 5 }\n")


def test_explain_needs_provenance():
    with engine() as e:
        e.run()
        with pytest.raises(SdylogError, match="provenance=True"):
            e.explain("path", (1, 2))


def test_runtime_errors_are_sdylog_errors():
    p = parse_program('.decl s(x: symbol)\n.decl n(x: number)\ns("12ab"). s("zz").\nn(to_number(x)) :- s(x).\n')
    with engine(p) as e:
        with pytest.raises(SdylogError, match=r'^<string>:4:1: error: wrong string provided by to_number\("zz"\) '
                                              r"in a rule of 'n'$"):
            e.run()
    p = parse_program(".decl n(x: number)\nn(1). n(0).\n.decl d(x: number)\nd(10 / x) :- n(x).\n")
    with engine(p) as e:
        with pytest.raises(SdylogError, match="^<string>:4:1: error: division by zero in a rule of 'd'$"):
            e.run()
