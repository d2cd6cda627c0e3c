"""run(relations=...) on the memory engine: the relations not asked for are
freed as soon as no later stratum reads them; what was asked for equals a
full run's, in C and in Python; a freed relation is an error to read, and
comes back (its loaded facts) with the next load or run. With keep=True
nothing is freed, and a later run(since=...) evaluates again only what
depends on the inputs replaced in between."""
import os

import pytest

from sdylog.datalog import make_engine, memory_engine, parse_program
from sdylog.datalog.engine import derived_by, drop_plan, needed_strata, strata_since, written_by
from sdylog.datalog.memory_engine import MemoryEngine
from sdylog.datalog.native_plan import _native
from sdylog.ir.diagnostics import SdylogError
from test_native_db import PROGRAM  # (pytest puts this directory on sys.path)

FACTS = {
    "edge": [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("c", "d", 1), ("d", "d", 5), ("e", "f", 2)],
    "blocked": [("f",)],
}
MODES = ["c", "python", "provenance"]


def engine_for(mode, monkeypatch, text=PROGRAM):
    if mode == "c" and _native is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
    e = make_engine(parse_program(text, "kept.dl"), "memory", provenance=mode == "provenance")
    assert (e._db is not None) == (mode == "c")
    for name, rows in FACTS.items():
        e.load(name, rows)
    return e


def full_run(mode, monkeypatch):
    with engine_for(mode, monkeypatch) as e:
        e.run()
        return {r: e.read(r) for r in e.relations}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wanted", [["tagged"], ["lonely", "out_degree"], ["weight"], ["node"]])
def test_kept_relations_equal_a_full_runs_and_the_others_are_gone(mode, wanted, monkeypatch, tmp_path):
    full = full_run(mode, monkeypatch)
    assert full == full_run("python", monkeypatch)
    with engine_for(mode, monkeypatch) as e:
        e.run(relations=wanted)
        for r in wanted:
            assert e.read(r) == full[r]
            assert e.size(r) == len(full[r])
        for r in set(e.relations) - set(wanted):
            for read in (e.read, e.scan, e.size, lambda r: e.contains(r, ("a",) * e.decl(r).arity)):
                with pytest.raises(SdylogError, match=f"relation '{r}' was not kept: the run asked only for "
                                                      f"{', '.join(wanted)}"):
                    read(r)
        with pytest.raises(SdylogError, match="was not kept"):
            e.save(str(tmp_path / "r.duckdb"))
        assert not (tmp_path / "r.duckdb").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_run_asked_for_some_relations_that_leaves_c_midway(mode, monkeypatch):
    # (C evaluates and frees the first strata, then hands one back; a value
    # beyond 64 bits, made in Python, sends every relation to Python sets: the
    # relations C freed are dropped there. The second engine runs with the
    # plans the first kept: C runs w's stratum and big's in one call)
    text = """
.decl v(x: number)
.decl w(x: number)
.decl big(x: number)
.decl after(x: number)
w(x + 1) :- v(x).
big(x * 4611686018427387904) :- w(x).
after(x + 1) :- big(x).
"""
    if mode == "c" and _native is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
    program = parse_program(text, "big.dl")
    for _ in range(2):
        with make_engine(program, "memory", provenance=mode == "provenance") as e:
            e.load("v", [(1,), (3,)])
            e.run(relations=["after"])
            assert e.read("after") == [(4611686018427387904 * 2 + 1,), (4611686018427387904 * 4 + 1,)]
            with pytest.raises(SdylogError, match="relation 'w' was not kept"):
                e.read("w")
            e.run()
            assert e.read("w") == [(2,), (4,)]


@pytest.mark.parametrize("mode", MODES)
def test_the_next_load_or_run_brings_freed_relations_back(mode, monkeypatch):
    full = full_run(mode, monkeypatch)
    with engine_for(mode, monkeypatch) as e:
        e.run(relations=["tagged"])
        e.load("blocked", [])   # (a freed input: its loaded facts again, none added)
        assert e.read("blocked") == full["blocked"]
        e.run(relations=["lonely"])
        assert e.read("lonely") == full["lonely"]
        e.run()
        assert {r: e.read(r) for r in e.relations} == full
        e.clear("edge")
        e.run(relations=["node"])
        assert e.read("node") == []


@pytest.mark.parametrize("mode", MODES)
def test_a_load_or_clear_brings_back_its_relations_only(mode, monkeypatch):
    with engine_for(mode, monkeypatch) as e:
        e.run(relations=["tagged"])
        e.load("blocked", [])
        e.clear("path")   # (a freed derived relation: back, empty)
        assert e.read("blocked") == FACTS["blocked"]
        assert e.read("path") == []
        for r in ("edge", "node", "open_edge"):
            with pytest.raises(SdylogError, match=f"relation '{r}' was not kept: the run asked only for tagged$"):
                e.read(r)
        e.run(relations=["lonely", "out_degree"])   # (the message names the last run's)
        with pytest.raises(SdylogError, match="'tagged' was not kept: the run asked only for lonely, out_degree$"):
            e.read("tagged")


@pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")
def test_freed_relations_hold_no_memory_in_c(monkeypatch):
    with engine_for("c", monkeypatch) as e:
        e.run()
        db = e._db
        assert all(sum(db.db.memory(db.table[r])) > 0 for r in ("edge", "path", "tagged"))
        e.run(relations=["tagged"])
        for r in set(e.relations) - {"tagged"}:
            assert db.db.memory(db.table[r]) == (0, 0, 0), r
        assert sum(db.db.memory(db.table["tagged"])) > 0


@pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")
def test_c_frees_each_relation_after_its_last_reader_within_the_call(monkeypatch):
    """The run is one call into C: the relations not asked for are emptied
    there as soon as their last reader ran (engine.DropPlan.after), not
    after the call (when Python marks them freed)."""
    from sdylog.datalog import native_db
    seen = []
    real = native_db.run_strata

    def recording(ndb, indexes, program, strata, changed, freed=None):
        def run_and_look(*args):
            out = ndb.db.real_run(*args)
            seen.append((out[1], {r: ndb.size(r) for r in ndb.table}))
            return out
        ndb.db = _Run(ndb.db, run_and_look)
        try:
            return real(ndb, indexes, program, strata, changed, freed)
        finally:
            ndb.db = ndb.db.real
    full = full_run("python", monkeypatch)
    monkeypatch.setattr(memory_engine, "run_strata", recording)
    with engine_for("c", monkeypatch) as e:
        e.run(relations=["tagged"])   # (planned stratum by stratum)
        seen.clear()
        e.run(relations=["tagged"])   # (the plans kept)
        # (a relation freed before its last reader ran would leave `tagged` short)
        assert e.read("tagged") == full["tagged"] != []
    ((done, sizes),) = seen
    assert done == 5   # (every stratum in one call)
    assert all(sizes[r] == 0 for r in ("edge", "blocked", "node", "open_edge", "path", "out_degree"))
    assert sizes["tagged"] > 0


class _Run:
    """A Database whose run is `run` (the real one: real_run)."""

    def __init__(self, db, run):
        self.real, self.run, self.real_run = db, run, db.run

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_the_drop_plan_frees_each_relation_after_its_last_reader():
    program = parse_program(PROGRAM, "kept.dl")
    strata = needed_strata(program, ["tagged"])
    assert [s.relations for s in strata] == [("node",), ("open_edge",), ("path",), ("out_degree",), ("tagged",)]
    plan = drop_plan(program, ["tagged"], list(program.relations))
    assert plan.kept == ("tagged",)
    assert plan.before == ["weight", "lonely"]   # not run: nothing reads them
    # edge: last read by open_edge (node reads it first); blocked: by open_edge's negation;
    # node, open_edge: by out_degree's aggregate; path: by tagged
    assert plan.after == [[], ["edge", "blocked"], [], ["node", "open_edge"], ["path", "out_degree"]]


CORPUS = os.environ.get("SDYLOG_CORPUS") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                                         "corpus", "jax")


@pytest.mark.parametrize("native", ["1", "0"])
def test_propagation_write_back_relations_equal_a_full_runs(native, monkeypatch):
    from types import SimpleNamespace

    from sdylog.ir import load_module, make_context
    from sdylog.propagation import PropagationOptions, propagate
    from sdylog.propagation.writeback import WRITE_BACK_RELATIONS

    path = os.path.join(CORPUS, "transformer_L2.mlir")
    if not os.path.exists(path):
        pytest.skip(f"corpus model {path} not found (set SDYLOG_CORPUS)")
    monkeypatch.setenv("SDYLOG_NATIVE", native)
    got = {}
    for derive in ("all", "write-back"):
        module = load_module(path, context=make_context())
        ctx = SimpleNamespace(filename=path, derive=derive)
        engine = propagate(module, PropagationOptions(), ctx).engine
        got[derive] = (str(module), {r: engine.read(r) for r in WRITE_BACK_RELATIONS})
        if derive == "write-back":
            with pytest.raises(SdylogError, match="'tensor_dim' was not kept"):
                engine.read("tensor_dim")
    assert got["all"] == got["write-back"]
    assert any(got["all"][1].values())


@pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")
def test_a_table_without_its_set_reads_the_same_and_gets_it_back_for_new_rows():
    db = _native.Database()
    t = db.add_table(2, (False, True))
    rows = [(i % 7, f"s{i % 5}") for i in range(50)]
    assert db.insert(t, rows)
    full = db.rows(t)
    db.drop_sets([t])
    assert db.memory(t)[1] == 0
    assert db.rows(t) == full == set(rows)
    assert db.insert(t, rows[:10] + [(99, "new")])   # (duplicates are still dropped)
    assert db.size(t) == len(full) + 1 and db.rows(t) == full | {(99, "new")}


DOES_NOT_LOWER = """
.decl item(x: symbol, n: number)
.decl big(x: symbol)
.decl name(x: symbol, y: symbol)
.decl count_big(n: number)
big(x) :- item(x, n), n > 2.
name(x, cat(x, "!")) :- big(x).
count_big(n) :- n = count : { big(_) }.
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_python_stratum_reads_a_relation_whose_set_was_freed(mode, monkeypatch):
    # big's C set goes after its stratum (only name and count_big were asked
    # for); name's stratum does not lower: it reads big's rows in Python
    got = {}
    for wanted in (None, ["name", "count_big"]):
        if mode == "c" and _native is None:
            pytest.skip("the C extension sdylog.datalog._native is not built")
        monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
        with make_engine(parse_program(DOES_NOT_LOWER, "py.dl"), "memory", provenance=mode == "provenance") as e:
            e.load("item", [(f"i{k}", k % 5) for k in range(40)])
            e.run(relations=wanted)
            got[wanted is None] = (e.read("name"), e.read("count_big"))
    assert got[True] == got[False] and len(got[True][0]) == 16 and got[True][1] == [(16,)]


RANKED = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl seed(x: number, l: number, r: number)
.decl lab(x: number, l: number, r: Rank)
.decl best_label(x: number, l: number)
.decl shown(x: number, s: symbol)
lab(x, l, r) :- seed(x, l, r).
lab(y, l, r + w) :- lab(x, l, r), edge(x, y, w).
lab(x, l1, r1) <= lab(x, l2, r2) :- r2 < r1.
best_label(x, l) :- lab(x, l, _).
shown(x, cat(to_string(l), "!")) :- lab(x, l, _).
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_rank_ordered_result_not_asked_for_is_stored_without_its_set(mode, monkeypatch):
    # lab (rank-ordered) is read by best_label (in C) and shown (in Python:
    # cat does not lower) after its set is gone
    if mode == "c" and _native is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
    lab_set = []   # per run in C: lab's set bytes and size as its stratum stores it
    real = MemoryEngine._run_next

    def run_next(engine, program, strata, *rest):
        counts = real(engine, program, strata, *rest)   # (evaluated in C, in all)
        if any(s.relations == ("lab",) for s in strata[:counts[1]]) and engine._db is not None:
            lab_set.append((engine._db.db.memory(engine._db.table["lab"])[1], engine._db.size("lab")))
        return counts
    monkeypatch.setattr(MemoryEngine, "_run_next", run_next)
    got = {}
    for wanted in (None, ["best_label", "shown"]):
        with make_engine(parse_program(RANKED, "ranked.dl"), "memory", provenance=mode == "provenance") as e:
            e.load("edge", [(i, (i * 3 + 1) % 12, 1 + i % 4) for i in range(12)] + [(i, i + 1, 2) for i in range(11)])
            e.load("seed", [(0, 1, 0), (5, 2, 1), (9, 3, 0)])
            e.run(relations=wanted)
            got[wanted is None] = (e.read("best_label"), e.read("shown"))
    assert got[True] == got[False] and len(got[True][0]) == 14   # (the same in every mode)
    if mode == "c":
        (full_set, n), (subset_set, n2) = lab_set
        assert full_set > 0 and subset_set == 0 and n == n2 > 0


@pytest.mark.parametrize("wanted", [None, ["tagged", "node"]])
def test_the_relations_a_run_derives_are_kept_per_program_as_listed(wanted):
    # (derived_by keeps, per program, what written_by lists for the strata of a run)
    program = parse_program(PROGRAM, "kept.dl")
    for since in (None, ["blocked"]):
        strata = needed_strata(program, wanted) if since is None else strata_since(program, wanted, since)
        assert derived_by(program, wanted, since) == frozenset(written_by(strata))
        assert derived_by(program, wanted, since) is derived_by(program, wanted, since)
    with pytest.raises(SdylogError, match="nowhere"):
        derived_by(program, ["nowhere"])   # (a relation asked for is one of the program's)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wanted", [None, ["tagged", "node"]])
def test_a_run_since_replaced_inputs_equals_a_fresh_run(mode, wanted, monkeypatch):
    program = parse_program(PROGRAM, "kept.dl")
    again = written_by(strata_since(program, wanted, ["blocked"]))
    assert "open_edge" in again and "tagged" in again and "node" not in again   # (node reads edge only)
    blocked = [("c",)]
    with engine_for(mode, monkeypatch) as fresh:
        fresh.replace("blocked", blocked)
        fresh.run()
        expected = {r: fresh.read(r) for r in wanted or fresh.relations}
    with engine_for(mode, monkeypatch) as e:
        e.run(relations=wanted, keep=True)
        for r in e.relations:
            e.read(r)   # (nothing freed: reading a freed relation is an error)
        e.replace("blocked", blocked)
        e.run(relations=wanted, since=["blocked"])
        assert {r: e.read(r) for r in wanted or e.relations} == expected
