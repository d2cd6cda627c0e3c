"""Relations held in C and plain / recursive strata evaluated there
(sdylog/datalog/native_db.py, native/db.c) against the all-Python path
(SDYLOG_NATIVE=0): the same relations, the same errors, and the strata that
keep the Python path."""
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdylog.datalog import make_engine, memory_engine, native_db, parse_program
from sdylog.datalog.plan import PlanCache
from sdylog.datalog.native_plan import (_AGG, _SYMBOL_ORDER, OP_ACC, OP_AGG, OP_BIND, OP_CMP, OP_EMIT, OP_SCAN, _native,
                                        plan_words)
from sdylog.ir.diagnostics import SdylogError

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")


def evaluate(text, facts, *, use_native, monkeypatch):
    """Every relation after a run (or the error's text), and per stratum
    (its relations) whether C evaluated it."""
    monkeypatch.setenv("SDYLOG_NATIVE", "1" if use_native else "0")
    in_c = {}
    real = memory_engine.run_strata

    def counting(db, indexes, program, strata, *rest):
        rounds, aborted = real(db, indexes, program, strata, *rest)
        for s in strata[:len(rounds)]:
            in_c[s.relations] = True
        if aborted or not rounds:
            s = strata[len(rounds)]
            if not s.subsumptive and not s.stepped:
                in_c[s.relations] = False
        return rounds, aborted
    monkeypatch.setattr(memory_engine, "run_strata", counting)
    with make_engine(parse_program(text, "gen.dl"), "memory") as e:
        assert (e._db is not None) == use_native
        for name, rows in facts.items():
            e.load(name, rows)
        try:
            e.run()
        except SdylogError as err:
            return str(err), in_c
        return {r: e.read(r) for r in e.relations}, in_c


def same(text, facts, monkeypatch):
    py, _ = evaluate(text, facts, use_native=False, monkeypatch=monkeypatch)
    c, in_c = evaluate(text, facts, use_native=True, monkeypatch=monkeypatch)
    assert c == py
    return c, in_c


PROGRAM = """
.decl edge(x: symbol, y: symbol, w: number)
.decl blocked(x: symbol)
.decl node(x: symbol)
.decl path(x: symbol, y: symbol)
.decl open_edge(x: symbol, y: symbol, w: number)
.decl out_degree(x: symbol, n: number)
.decl weight(x: symbol, total: number, lo: number, hi: number)
.decl lonely(x: symbol)
.decl tagged(x: symbol, y: symbol)
node(x) :- edge(x, _, _).
node(y) :- edge(_, y, _).
open_edge(x, y, w) :- edge(x, y, w), !blocked(y), x != y.
path(x, y) :- open_edge(x, y, _).
path(x, z) :- path(x, y), open_edge(y, z, _).
out_degree(x, n) :- node(x), n = count : { open_edge(x, _, _) }.
weight(x, t, lo, hi) :- node(x), t = sum w : { edge(x, _, w) }, lo = min w : { edge(x, _, w) },
    hi = max w + 1 : { edge(x, y, w), path(y, _) }.
lonely(x) :- node(x), !path(x, _), !path(_, x).
tagged(x, "hub") :- out_degree(x, n), n >= 2.
tagged(x, y) :- path(x, y), y = "a".
"""


def test_joins_negation_aggregates_recursion_and_symbols(monkeypatch):
    facts = {"edge": [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("a", "d", 5), ("e", "e", 1), ("c", "f", 7)],
             "blocked": [("d",)]}
    got, in_c = same(PROGRAM, facts, monkeypatch)
    assert all(in_c.values()) and len(in_c) == 7   # (every derived relation)
    assert ("b", "a") in got["path"] and ("a", "d") not in got["path"]
    assert got["weight"] == [("a", 6, 1, 2), ("b", 2, 2, 3), ("c", 10, 3, 4)]   # (e: max over nothing)
    assert got["lonely"] == [("d",), ("e",)]
    assert got["tagged"] == [("a", "a"), ("b", "a"), ("c", "a"), ("c", "hub")]   # (a -> d is blocked)


def relations_after_run(program, facts, native, monkeypatch, on_engine=None):
    """The relations of a new engine of `program` after a run on `facts`
    (in C or the Python path); `on_engine(e)` first, if given."""
    monkeypatch.setenv("SDYLOG_NATIVE", "1" if native else "0")
    with make_engine(program, "memory") as e:
        if on_engine is not None:
            on_engine(e)
        for name, rows in facts.items():
            e.load(name, rows)
        e.run()
        return {r: e.read(r) for r in e.relations}


def test_a_program_run_again_plans_only_where_the_sizes_differ_much(monkeypatch):
    """Plans are kept per program with the sizes their planning read
    (plan.PlanCache): the same facts again, facts whose symbols get other
    ids (the rules' "a" and "hub": bound at each run), or a few more facts
    plan nothing; a relation that was empty and is not, or a size many
    times larger, plan anew; every run gives the Python path's relations."""
    program = parse_program(PROGRAM, "plans.dl")
    planned = []
    real = native_db._lower
    monkeypatch.setattr(native_db, "_lower", lambda p, s, ctx: planned.append(s) or real(p, s, ctx))

    def run(facts, native: bool):
        planned.clear()
        return relations_after_run(program, facts, native, monkeypatch), len(planned)

    first = {"edge": [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("a", "d", 5), ("c", "f", 7)],
             "blocked": [("d",)]}
    swap = {"a": "b", "b": "a"}
    renamed = {r: [tuple(swap.get(x, x) for x in row) for row in rows] for r, rows in first.items()}
    bigger = {**first, "edge": first["edge"] + [("f", "a", 2), ("f", "e", 1)]}
    unblocked = {**first, "blocked": []}
    many = {**first, "edge": [(f"n{i % 23}", f"n{i * 7 % 31}", i % 5) for i in range(700)]}
    for facts, plans in [(first, True), (first, False), (renamed, False), (bigger, False), (unblocked, True),
                         (many, True), (first, False)]:
        got, n = run(facts, native=True)
        assert got == run(facts, native=False)[0]
        assert (n > 0) == plans


FEW = {"edge": [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("a", "d", 5), ("c", "f", 7)], "blocked": [("d",)]}
MANY = {**FEW, "edge": [(f"n{i % 23}", f"n{i * 7 % 31}", i % 5) for i in range(700)]}


def counting_runs(program, monkeypatch):
    """run(facts, native=True): a new engine's relations after a run of
    `program` on `facts`, and the strata offered by each call of its C
    database's run."""
    calls = []

    class Counting:
        def __init__(self, db):
            self.db = db

        def run(self, strata):
            calls.append(len(strata))
            return self.db.run(strata)

        def __getattr__(self, name):
            return getattr(self.db, name)

    def run(facts, native=True):
        calls.clear()
        counted = (lambda e: setattr(e._db, "db", Counting(e._db.db))) if native else None
        return relations_after_run(program, facts, native, monkeypatch, counted), list(calls)
    return run


def test_consecutive_strata_run_in_one_call_while_their_plans_fit(monkeypatch):
    """Strata with plans kept run in one call of the C database, each after
    C checked that the sizes it reads are those its plan was made for (plan.
    PlanCache.bounds); the first stratum whose plan no longer fits ends the
    call, and is planned anew."""
    run = counting_runs(parse_program(PROGRAM, "batch.dl"), monkeypatch)
    _, planning = run(FEW)
    assert planning == [1] * 7   # (no plan kept yet: one stratum per call)
    got, kept = run(FEW)
    assert kept == [7] and got == run(FEW, native=False)[0]
    got, stale = run(MANY)
    assert stale[0] == 7 and len(stale) > 1 and got == run(MANY, native=False)[0]
    assert run(MANY)[1] == [7]


def test_data_of_two_sizes_in_turn_runs_each_stratum_with_a_plan_kept_for_it(monkeypatch):
    """Data of two sizes in turn (as reshard's two decisions per export
    pipeline): C is offered every plan kept for a stratum and runs the
    first whose sizes fit, so once both sizes have plans each run is one
    call, not one per stratum whose latest plan was made for the other."""
    run = counting_runs(parse_program(PROGRAM, "turns.dl"), monkeypatch)
    run(FEW)
    assert len(run(MANY)[1]) > 1   # (the plans kept were made for the few facts)
    for facts in (FEW, MANY, FEW, MANY):
        got, turns = run(facts)
        assert turns == [7] and got == run(facts, native=False)[0]


def test_data_of_two_sizes_in_turn_makes_each_batch_once(monkeypatch):
    """The batch a db.run call offers is made once for each plan picked for
    its first stratum (native_db._batch): runs taking turns on data of two
    sizes, once each has its plans, offer batches made before."""
    run = counting_runs(parse_program(PROGRAM, "made.dl"), monkeypatch)
    expected = {}
    for facts in (FEW, MANY, FEW, MANY):
        run(facts)
        expected[id(facts)] = run(facts, native=False)[0]
    made = []
    real = native_db._batch_made
    monkeypatch.setattr(native_db, "_batch_made", lambda *args: made.append(1) or real(*args))
    for facts in (FEW, MANY, FEW, MANY):
        got, calls = run(facts)
        assert calls == [7] and got == expected[id(facts)]
    assert made == []


def test_cold_start_with_plans_for_two_sizes_runs_each_in_one_call(monkeypatch):
    """A program saved with plans kept for data of two sizes (as reshard's
    two decisions per export pipeline) offers C every saved plan of a
    stratum, unread: a new process's first run on either size, and the
    next on the other, is one call each, with the Python path's relations."""
    import pickle
    program = parse_program(PROGRAM, "cold.dl")
    run = counting_runs(program, monkeypatch)
    for facts in (FEW, MANY, FEW, MANY):
        run(facts)
    for order in ((FEW, MANY), (MANY, FEW)):
        cold = pickle.loads(pickle.dumps(program))
        run = counting_runs(cold, monkeypatch)
        for facts in order:
            got, calls = run(facts)
            assert calls == [7] and got == relations_after_run(program, facts, False, monkeypatch)


def test_a_saved_program_offers_the_batches_made_before_it_was_saved(monkeypatch):
    """The batches of a program's layout are saved with it while no plan was
    made after them (TableLayout.__getstate__): a new process's first run
    on data of either size makes none, offers C the plans the plain way
    (_batch_made) offers, and gives the Python path's relations; batches
    made before a plan was are not saved."""
    import pickle
    program = parse_program(PROGRAM, "saved.dl")
    run = counting_runs(program, monkeypatch)
    for facts in (FEW, MANY, FEW, MANY):
        run(facts)
    made, offers = [], []
    real_made, real_batch = native_db._batch_made, native_db._batch

    def batch(ndb, indexes, program, strata):
        got = real_batch(ndb, indexes, program, strata)
        plain = real_made(ndb, program, got.strata, True)
        offers.append(([[pickle.dumps(p) for p in s] for s in got.offered],
                       [[pickle.dumps(p) for p in s] for s in plain.offered]))
        return got
    monkeypatch.setattr(native_db, "_batch", batch)
    monkeypatch.setattr(native_db, "_batch_made", lambda *args: made.append(1) or real_made(*args))
    saved = pickle.dumps(program)
    for facts in (FEW, MANY):
        run = counting_runs(pickle.loads(saved), monkeypatch)
        offers.clear()
        got, calls = run(facts)
        assert calls == [7] and made == [] and got == relations_after_run(program, facts, False, monkeypatch)
        assert [saved for saved, _ in offers] == [plain for _, plain in offers]
    native_db.plans_of(program).added += 1   # (as if a plan had been made after the batches)
    assert pickle.loads(pickle.dumps(program)).run_cache["schema"].tables.batches == {}


def test_batches_made_for_many_sizes_stay_few(monkeypatch):
    """A long process runs a program on modules of many sizes, each picking
    plans of its own: the batches kept for a first stratum stay at most
    twice the plans a PlanCache keeps (native_db._batch), and runs give the
    Python path's relations."""
    monkeypatch.setattr(PlanCache, "KEPT", 1)   # (so that few sizes fill the bound)
    program = parse_program(PROGRAM, "bounded.dl")
    run = counting_runs(program, monkeypatch)
    layouts = []
    real = native_db._batch
    monkeypatch.setattr(native_db, "_batch", lambda ndb, *rest: layouts.append(ndb.layout) or real(ndb, *rest))
    for n in (5, 60, 700, 5, 60, 700):
        facts = {**FEW, "edge": [(f"n{i % 97}", f"n{i * 7 % 101}", i % 5) for i in range(n)]}
        assert run(facts)[0] == run(facts, native=False)[0]
    (layout,) = {id(lay): lay for lay in layouts}.values()
    assert layout.batches and all(len(made) <= 2 * PlanCache.KEPT for made in layout.batches.values())
    assert max(map(len, layout.batches.values())) > 1   # (sizes that picked other plans: more than one)


def test_a_later_engine_of_a_program_binds_no_stratum_again(monkeypatch):
    """A stratum's C arguments (table numbers, the ids of the symbols its
    rules name, size checks) are bound once per program (native_db.
    TableLayout): a later engine of the program binds none, even with facts
    whose symbols would take other ids, and gives the Python path's relations."""
    program = parse_program(PROGRAM, "layout.dl")
    bound = []
    real = native_db._plan_words
    monkeypatch.setattr(native_db, "_plan_words", lambda ndb, s, *rest: bound.append(s.relations) or real(ndb, s, *rest))

    def run(facts, native=True):
        bound.clear()
        return relations_after_run(program, facts, native, monkeypatch), list(bound)
    swap = {"a": "hub", "b": "z", "hub": "a"}   # (ids given in another order; the sizes of FEW)
    renamed = {r: [tuple(swap.get(x, x) for x in row) for row in rows] for r, rows in FEW.items()}
    assert run(FEW)[1]
    for facts in (FEW, renamed):
        got, again = run(facts)
        assert again == [] and got == run(facts, native=False)[0]


def test_a_batch_offered_again_is_the_one_made_afresh(monkeypatch):
    """run_strata offers again the batch it made for the same strata and
    first plan while the plans kept for them are the same (native_db._batch): every db.run call,
    data of two sizes in turn (plans made, then the kept ones taking turns
    first), offers C the plans the plain way (_batch_made each time) offers."""
    def runs(program, plain: bool):
        offers = []
        if plain:
            monkeypatch.setattr(native_db, "_batch", plain_batch)
        real_run = native_db.run_strata
        # (a C plan stands for the plan kept it was bound from, its sizes read:
        # a plan bound again, e.g. after TableLayout.bound forgot it, is the same)
        loaded_from = {}
        real_bound = native_db._bound

        def bound(*args):
            got = real_bound(*args)
            loaded_from[id(got.plan)] = (got.plan, got.seen)
            return got
        monkeypatch.setattr(native_db, "_bound", bound)

        class Recording:
            def __init__(self, db):
                self.db = db

            def run(self, strata):
                offers.append([[id(loaded_from[id(p)][1]) for p in offered] for offered in strata])
                return self.db.run(strata)

            def __getattr__(self, name):
                return getattr(self.db, name)

        def recording(ndb, *rest):
            real, ndb.db = ndb.db, Recording(ndb.db)
            try:
                return real_run(ndb, *rest)
            finally:
                ndb.db = real
        monkeypatch.setattr(memory_engine, "run_strata", recording)
        got = []
        for facts in (FEW, MANY, FEW, FEW, MANY, MANY, FEW):
            got.append(relations_after_run(program, facts, True, monkeypatch))
        monkeypatch.undo()
        return got, offers, loaded_from

    real_batch = native_db._batch

    def plain_batch(ndb, indexes, program, strata):
        ndb.layout.batches.clear()
        return real_batch(ndb, indexes, program, strata)
    cached = runs(parse_program(PROGRAM, "again.dl"), plain=False)
    plain = runs(parse_program(PROGRAM, "again.dl"), plain=True)
    assert cached[0] == plain[0]
    assert [len(o) for o in cached[1]] == [len(o) for o in plain[1]]
    assert renumbered(cached[1]) == renumbered(plain[1])   # (the same plans, in the same order)


def renumbered(offers):
    """offers with each C plan's id replaced by the order it first appears in."""
    first: dict = {}
    return [[[first.setdefault(i, len(first)) for i in s] for s in c] for c in offers]


def test_a_loaded_plan_runs_on_tables_of_its_shapes_only():
    # (a plan is loaded once, by the first database to run it, and run by every
    # database of its program's layout; one whose tables have other shapes refuses it)
    made = _native.Database([(2, (False, False)), (2, (False, False))])
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    plan = _native.Plan(plan_words([1], [(0, (), False)], [copy], [[]], []))
    for db in (made, _native.Database([(2, (False, False)), (2, (False, False))])):
        assert db.insert(0, [(1, 2), (3, 4)])
        assert db.run([[plan]]) == ("ok", 1, [0]) and db.rows(1) == {(1, 2), (3, 4)}
    other = _native.Database([(3, (False, False, False)), (2, (False, False))])
    with pytest.raises(ValueError, match="another database"):
        other.run([[plan]])


def test_a_database_made_with_symbols_gives_them_their_ids_in_order():
    # (a run's database is made from its layout's tables and symbols: TableLayout.database)
    db = _native.Database([(2, (True, False)), (1, (True,))], ["b", "a\udc80", "c"])
    assert db.symbols() == ["b", "a\udc80", "c"] and [db.size(t) for t in (0, 1)] == [0, 0]
    assert db.intern("c") == 2 and db.intern("y") == 3
    assert db.insert(1, [("a\udc80",), ("c",)]) and db.rows(1) == {("a\udc80",), ("c",)}
    assert not db.insert(1, [(1,)])
    # (symbols compare by their strings, the surrogate's kept as it is)
    less = (2, 2, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_SCAN, 0, 1, OP_BIND, 1, 1, 0, OP_CMP, _SYMBOL_ORDER["<"], 0, 1,
                   OP_EMIT, 0, 2, 0, 1], [])
    pairs = db.add_table(2, (True, True))
    assert db.run([[_native.Plan(plan_words([pairs], [(1, (), False)], [less], [[]], []))]])[0] == "ok"
    assert db.rows(pairs) == {("a\udc80", "c")}


def test_table_shapes_and_frees_of_another_form_are_errors():
    # (the constructor and run read them from their tuples, without PyArg_ParseTuple)
    for shape, error in (((2,), TypeError), ([2, (False, False)], TypeError), (("2", (False, False)), TypeError),
                         ((65, (False,) * 65), ValueError), ((-1, ()), ValueError), ((2, (False,)), ValueError),
                         ((1 << 40, ()), ValueError)):
        with pytest.raises(error):
            _native.Database([shape])
    db = _native.Database([(2, (False, False)), (2, (False, False))])
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    plan = _native.Plan(plan_words([1], [(0, (), False)], [copy], [[]], []))
    assert db.insert(0, [(1, 2)])
    with pytest.raises(TypeError, match="frees"):
        db.run([[plan]], [[[0], []]])
    # (a table freed after the stratum that read it: emptied, whether it held rows or not)
    assert db.run([[plan]], [([0], [1])]) == ("ok", 1, [0])
    assert db.size(0) == 0 and db.rows(1) == {(1, 2)}
    db.clear([0, 1])
    assert db.insert(1, [(5, 6)]) and db.rows(1) == {(5, 6)}


def test_a_plan_whose_words_are_cut_short_or_out_of_range_is_refused():
    # (a plan's load checks every word it reads: a cache file written by other code,
    # or damaged past its checksum, raises, never reads beyond its words)
    db = _native.Database([(2, (False, False)), (2, (False, False))])
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    words = plan_words([1], [(0, (), False)], [copy], [[]], [])
    assert db.run([[_native.Plan(words)]])[0] == "ok"
    for bad in (words[:-8], words + words[:8], words[:7], plan_words([2], [(0, (), False)], [copy], [[]], []),
                plan_words([1], [(0, (5,), False)], [copy], [[]], []), b""):
        with pytest.raises(ValueError):
            db.run([[_native.Plan(bad)]])


def test_an_aggregate_whose_body_ends_inside_an_instruction_is_refused():
    # (AGG goes on after its body's n words: where it lands must start an instruction,
    # as a BRANCH option's or a JOIN's does; here it lands on ACC's last word)
    db = _native.Database([(2, (False, False)), (2, (False, False))])
    assert db.insert(0, [(1, 2)])
    for n, refused in ((8, False), (7, True)):
        counted = (4, 2, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_AGG, _AGG["count"], 1, 2, n,
                          OP_SCAN, 0, 1, OP_ACC, _AGG["count"], 1, 2, 3, OP_EMIT, 0, 2, 0, 1], [])
        plan = _native.Plan(plan_words([1], [(0, (), False)], [counted], [[]], []))
        if refused:
            with pytest.raises(_native.PlanRefused, match="malformed program"):
                db.run([[plan]])
        else:
            assert db.run([[plan]]) == ("ok", 1, [0]) and db.rows(1) == {(1, 1)}


BEYOND_A_ROW = """
import sys
from sdylog.datalog.native_plan import OP_BIND, OP_CHECK, OP_DISTINCT, OP_EMIT, OP_SCAN, _native, plan_words
db = _native.Database([(2, (False, False)), (2, (False, False))])
assert db.insert(0, [(1, 2)])
refused = 0
for body in ([OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 2],     # (column 2 of a row of 2)
             [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_CHECK, 0, 5, 0],    # (column 5 of a row of 2)
             [OP_BIND, 0, 1, 0, OP_BIND, 1, 0, 1],                    # (slot 1 holds no row)
             [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 1, 1]):    # (slot 1 holds no row)
    program = (2, 2, body + [OP_EMIT, 0, 2, 0, 1], [])
    try:
        db.run([[_native.Plan(plan_words([1], [(0, (), False)], [program], [[]], []))]])
    except ValueError as e:
        refused += "malformed program" in str(e)
# (DISTINCT compares a slot's row with the tested tuple: a slot of no row is refused)
try:
    db.run([[_native.Plan(plan_words([1], [(0, (), False)], [(2, 2, [OP_DISTINCT, 1], [])], [[]], []))]])
except ValueError:
    refused += 1
print(refused)
"""


def test_a_plan_reading_beyond_a_row_is_refused_not_run():
    # (a BIND or CHECK column is checked against the arity of the table its slot's
    # SCAN / LOOKUP reads: a saved plan's words come from disk. In a child
    # process: a regression would crash the interpreter, not fail this test only)
    done = subprocess.run([sys.executable, "-c", BEYOND_A_ROW], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5"]


LISTS_EMPTIED_WHILE_READ = """
import gc
from sdylog.datalog.native_plan import OP_BIND, OP_EMIT, OP_SCAN, _native, plan_words
class Emptying:
    # (a table number, arity or step column whose __index__ empties the caller's list
    # that holds the tuple being read)
    def __init__(self, victim, value): self.victim, self.value = victim, value
    def __index__(self):
        self.victim.clear(); gc.collect()
        return self.value
copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
plan = _native.Plan(plan_words([1], [(0, (), False)], [copy], [[]], []))
db = _native.Database([(2, (False, False)), (2, (False, False))])
db.insert(0, [(1, 2)])
frees = []
frees.append(([Emptying(frees, 0)], [1]))
print(db.run([[plan]], frees))
tables = []
tables.append((Emptying(tables, 1), (True,)))
print(_native.Database(tables).add_table(1, (False,)))
strata = []
strata.append(([(Emptying(strata, 0), 1, 2, 3, 0)], [], []))
print(_native.Database([(1, (False,))] * 4).run(strata))
"""


def test_a_list_emptied_while_its_tuple_is_read_is_no_crash():
    # (run and the constructor hold what they read from a caller's list across a
    # conversion that may run Python code. In a child process with -X dev, whose
    # allocator poisons freed memory: a regression crashes the interpreter)
    done = subprocess.run([sys.executable, "-X", "dev", "-c", LISTS_EMPTIED_WHILE_READ],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["('ok', 1, [0])", "1", "('ok', 1, [0])"]


def test_a_symbol_column_flag_that_cannot_be_a_bool_is_its_error():
    class NoBool:
        def __bool__(self):
            raise RuntimeError("no bool")
    with pytest.raises(RuntimeError, match="no bool"):
        _native.Database([(1, (NoBool(),))])
    db = _native.Database([])
    with pytest.raises(RuntimeError, match="no bool"):
        db.add_table(2, (False, NoBool()))
    assert db.add_table(1, (True,)) == 0   # (the refused table was not made)


def test_a_symbol_id_out_of_range_is_an_error_when_read():
    # (a malformed plan can EMIT any int into a symbol column: reading it raises)
    db = _native.Database([(1, (False,)), (1, (True,))], ["a"])
    assert db.insert(0, [(1,)])
    emit = (2, 1, [OP_SCAN, 0, 0, OP_EMIT, 0, 1, 1], [1, 7])   # (register 1 = 7, no symbol 7)
    assert db.run([[_native.Plan(plan_words([1], [(0, (), False)], [emit], [[]], []))]])[0] == "ok"
    with pytest.raises(ValueError, match="symbol id 7"):
        db.rows(1)


def test_a_plan_pickles_as_its_words():
    import pickle
    db = _native.Database([(2, (False, False)), (2, (False, False))])
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    plan = _native.Plan(plan_words([1], [(0, (), False)], [copy], [[]], []))
    assert db.insert(0, [(1, 2)]) and db.run([[plan]])[0] == "ok"
    again = pickle.loads(pickle.dumps(plan))
    assert db.run([[again]])[0] == "ok" and db.rows(1) == {(1, 2)}


@st.composite
def graphs(draw):
    node = st.sampled_from("abcdef")
    return {"edge": draw(st.lists(st.tuples(node, node, st.integers(-3, 3)), max_size=15)),
            "blocked": draw(st.lists(st.tuples(node), max_size=2))}


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_generated_facts_give_the_same_relations(facts):
    with pytest.MonkeyPatch.context() as mp:
        same(PROGRAM, facts, mp)


def test_indexes_over_relations_of_many_keys_and_rows(monkeypatch):
    # (a packed index grows with its keys while it is built: thousands of
    # keys, some of one row, some of many; an index whose keys each have one
    # row reads the table's rows; a plain stratum's base tuples, duplicates
    # among them, go straight into its table)
    text = """
.decl e(x: number, y: number)
.decl u(x: number, w: number)
.decl j(x: number, y: number, w: number)
.decl k(x: number, n: number)
.decl p(x: number, y: number)
j(x, y, w) :- e(x, y), u(y, w).
j(x, y, w) :- e(y, x), u(x, w), !u(y, _).
k(x, n) :- u(x, _), n = count : { e(x, _) }.
p(x, y) :- e(x, y), y < 40.
p(x, z) :- p(x, y), e(y, z), z < 40.
"""
    edges = [(i % 97, (i * 7) % 3001) for i in range(3000)] + [(5000 + i, i) for i in range(40)]
    facts = {"e": edges, "u": [(i, -i) for i in range(0, 3001, 3)]}
    got, in_c = same(text, facts, monkeypatch)
    assert all(in_c.values())
    assert len(got["j"]) > 1000 and len(got["k"]) == 1001 and got["p"]


def test_an_index_has_buckets_for_its_keys_not_its_rows():
    # 4096 rows of 8 keys 0, 3000, ... on column 0: 16 hashed buckets of 12
    # bytes, and the row numbers in key order; column 1 is a key per row
    # (ids 0..4095): a direct index, a bucket per id, no numbers
    db = _native.Database()
    t = db.add_table(2, (False, False))
    assert db.insert(t, [(i % 8 * 3000, i) for i in range(4096)])
    rows, hash_set, _ = db.memory(t)
    assert rows == 4096 * 16 and db.index_keys(t, (0,)) == 8
    assert db.memory(t) == (rows, hash_set, 16 * 12 + 4096 * 4)
    assert db.index_keys(t, (1,)) == 4096
    assert db.memory(t) == (rows, hash_set, 16 * 12 + 4096 * 4 + 4096 * 12)


def test_a_direct_index_has_a_bucket_per_value_of_its_range():
    # a column of few more values than rows (ids 5, 7, 9, ...): bucket k - 5
    db = _native.Database()
    t = db.add_table(2, (False, False))
    assert db.insert(t, [(5 + 2 * (i % 100), i) for i in range(300)])
    assert db.index_keys(t, (0,)) == 100
    assert db.memory(t)[2] == 199 * 12 + 300 * 4


def test_keys_few_against_their_range_get_hashed_buckets():
    # 100,000 rows holding only 0 and 199,999: a range of twice the rows, but
    # two keys: 16 hashed buckets, not 200,000 direct ones (2.4 MB)
    db = _native.Database()
    t = db.add_table(2, (False, False))
    assert db.insert(t, [(i % 2 * 199_999, i) for i in range(100_000)])
    assert db.index_keys(t, (0,)) == 2
    assert db.memory(t)[2] == 16 * 12 + 100_000 * 4


@pytest.mark.parametrize("rule", [
    'name(x, cat(x, "!")) :- item(x, _).',        # a string functor
    "name(x, x) :- item(x, _), match(\"b.*\", x).",  # a regular expression
    "name(x, to_string(n)) :- item(x, n).",
])
def test_strata_that_do_not_lower_run_in_python(rule, monkeypatch):
    text = f"""
.decl item(x: symbol, n: number)
.decl name(x: symbol, y: symbol)
.decl again(x: symbol, y: symbol)
{rule}
again(y, x) :- name(x, y), item(x, _).
"""
    got, in_c = same(text, {"item": [("b", 1), ("z", 2)]}, monkeypatch)
    assert in_c == {("name",): False, ("again",): True}   # (what Python wrote is read from C)
    assert got["name"]


def test_floats_stay_in_python(monkeypatch):
    text = """
.decl m(x: number, f: float)
.decl n(x: number)
.decl k(x: number, f: float)
n(x) :- m(x, f), f > 0.5, x > 0.
k(x, f * 2.0) :- m(x, f).
"""
    got, in_c = same(text, {"m": [(1, 0.25), (2, 0.75)]}, monkeypatch)
    assert in_c == {("n",): False, ("k",): False}   # (k holds a float: not a C relation)
    assert got["n"] == [(2,)] and got["k"] == [(1, 0.5), (2, 1.5)]


def test_a_rank_ordered_stratum_reading_floats_runs_in_python(monkeypatch):
    # (float relations are not C tables: the rank-ordered stratum's planner
    # must not ask the C database about one)
    text = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl weight(x: number, f: float)
.decl dist(x: number, d: Rank)
dist(0, 0).
dist(y, d + w) :- dist(x, d), edge(x, y, w), weight(x, _).
dist(x, d1) <= dist(x, d2) :- d2 < d1.
"""
    got, _ = same(text, {"edge": [(0, 1, 2), (1, 2, 3), (0, 2, 9)], "weight": [(0, 0.5), (1, 1.5)]}, monkeypatch)
    assert got["dist"] == [(0, 0), (1, 2), (2, 5)]


@pytest.mark.parametrize("rule", [
    "big(x * 4611686018427387904) :- v(x).",        # beyond 64 bits: Python's integers
    "big(x / (x - 3)) :- v(x).",                     # Python's division error
    "big(s) :- v(_), s = sum x * 4611686018427387904 : { v(x) }.",
])
def test_what_c_cannot_compute_is_evaluated_in_python(rule, monkeypatch):
    # (a value beyond 64 bits sends every relation back to Python sets: the
    # strata after it, joins through indexes included, run there)
    text = f"""
.decl v(x: number)
.decl big(x: number)
.decl after(x: number)
.decl pair(x: number, y: number)
{rule}
after(x + 1) :- big(x).
pair(x, y) :- v(y), after(x), big(z), x = z + 1, y < 2.
"""
    got, in_c = same(text, {"v": [(1,), (3,)]}, monkeypatch)
    assert in_c.get(("big",)) is False
    assert isinstance(got, str) and "division by zero" in got or max(got["big"])[0] > 2 ** 63


def test_facts_loaded_into_a_recursive_relation_start_it(monkeypatch):
    text = ".decl e(x: number, y: number)\n.decl p(x: number, y: number)\np(x, y) :- e(x, y).\n" \
           "p(x, z) :- p(x, y), e(y, z).\n"
    got, in_c = same(text, {"e": [(2, 3)], "p": [(1, 2)]}, monkeypatch)
    assert in_c == {("p",): True}
    assert got["p"] == [(1, 2), (1, 3), (2, 3)]


def test_a_stratum_fed_by_nothing_derives_nothing_but_its_loaded_rows_still_grow(monkeypatch):
    # (C does not set up a stratum whose every clause starts on a table with no
    # row, unless the stratum's own tables hold rows its recursive clauses read)
    text = ".decl none(x: number, y: number)\n.decl e(x: number, y: number)\n" \
           ".decl p(x: number, y: number)\np(x, y) :- none(x, y).\np(x, z) :- p(x, y), e(y, z).\n" \
           ".decl q(x: number)\nq(x) :- none(x, _).\n.decl r(x: number)\nr(x) :- e(x, _), !q(x).\n"
    got, in_c = same(text, {"e": [(2, 3)], "p": [(1, 2)]}, monkeypatch)
    assert all(in_c.values())
    assert got["p"] == [(1, 2), (1, 3)] and got["q"] == [] and got["r"] == [(2,)]


def test_the_engine_api_reads_relations_held_in_c(monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "1")
    with make_engine(parse_program(PROGRAM, "gen.dl"), "memory") as e:
        e.load("edge", [("a", "b", 1), ("b", "a", 2)])
        e.run()
        assert e.size("path") == 4 and e.contains("path", ("a", "a"))
        assert e.scan("path") == {("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")}
        assert list(e.read_columns("out_degree")["n"]) == [1, 1]
        e.load("edge", [("b", "c", 3)])   # a change: read again after the next run
        e.run()
        assert e.size("path") == 6 and ("a", "c") in e.scan("path")
        e.clear("edge")
        e.run()
        assert e.read("path") == [] and e.read("node") == []


def test_facts_are_checked_and_converted_as_in_python(monkeypatch):
    def loaded(use_native):
        monkeypatch.setenv("SDYLOG_NATIVE", "1" if use_native else "0")
        with make_engine(parse_program(PROGRAM, "gen.dl"), "memory") as e:
            with pytest.raises(SdylogError, match="has 2 values"):
                e.load("edge", [("a", "b", 1), ("a", "b")])
            assert e.size("edge") == 0   # (nothing of a bad batch goes in)
            e.load("edge", [("a", "b", 1), (7, "c", True), ("c", "a", 2)])   # (converted by kind: "7", 1)
            assert (e._db is not None) == use_native
            e.load("edge", [("z", "a", 2 ** 70)])   # no C form: every relation back in Python sets
            assert e._db is None
            e.run()
            return {r: e.read(r) for r in e.relations}
    got = loaded(True)
    assert got == loaded(False)
    assert got["edge"] == [("7", "c", 1), ("a", "b", 1), ("c", "a", 2), ("z", "a", 2 ** 70)]
    assert ("z", 2 ** 70, 2 ** 70, 2 ** 70 + 1) in got["weight"]


def test_a_plan_whose_checks_fail_is_not_loaded_further():
    # (a run offers every plan kept for a stratum: the head of each, its tables and
    # checks, loads first, its programs only when it runs; one cut short after its
    # head is passed over when its checks fail, refused when they hold)
    db = _native.Database([(2, (False, False)), (2, (False, False))])
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    assert db.insert(0, [(1, 2), (3, 4)])
    for_many = plan_words([1], [(0, (), False)], [copy], [[]], [(0, 100, 200)])[:-8]   # (programs cut short)
    for_two = plan_words([1], [(0, (), False)], [copy], [[]], [(0, 1, 10)])
    assert db.run([[_native.Plan(for_many), _native.Plan(for_two)]]) == ("ok", 1, [0])
    assert db.rows(1) == {(1, 2), (3, 4)}
    with pytest.raises(_native.PlanRefused, match="cut short"):
        db.run([[_native.Plan(for_two[:-8])]])


def test_a_plan_is_pickled_as_int32_words_when_all_fit():
    # (a saved program's file holds its layout's plans: half the bytes when every
    # word fits 32 bits; a constant beyond keeps them int64)
    import pickle
    copy = (2, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1], [])
    big = (3, 1, [OP_SCAN, 0, 0, OP_BIND, 0, 0, 0, OP_CMP, 0, 0, 2, OP_BIND, 1, 0, 1, OP_EMIT, 0, 2, 0, 1],
           [2, 2 ** 40])
    for program, width, rows in ((copy, 4, {(1, 2), (2 ** 40, 3)}), (big, 8, {(2 ** 40, 3)})):
        words = plan_words([1], [(0, (), False)], [program], [[]], [])
        saved, saved_width = _native.Plan(words).__reduce__()[1]
        assert saved_width == width and len(saved) == len(words) * width // 8
        again = pickle.loads(pickle.dumps(_native.Plan(words)))
        assert again.__reduce__()[1] == (saved, width)
        db = _native.Database([(2, (False, False)), (2, (False, False))])
        assert db.insert(0, [(1, 2), (2 ** 40, 3)])
        assert db.run([[again]])[0] == "ok" and db.rows(1) == rows


def test_a_saved_program_compares_against_its_negative_int32_constants(monkeypatch):
    """(int32 words load sign-extended: a program saved with plans of width 4
    holding -1 and -2**31, run cold with the plans it saved, derives the
    rows of its first run and of the Python path; -2**40 keeps its plan's
    words int64)"""
    import pickle
    program = parse_program(".decl e(x: number, y: number)\n.decl neg(x: number)\n.decl low(x: number)\n"
                            ".decl far(x: number)\nneg(x) :- e(x, y), y = -1.\nlow(x) :- e(x, y), y = -2147483648.\n"
                            "far(x) :- e(x, y), y = -1099511627776.\n", "negative.dl")
    # (each constant's unsigned twin, 2**32 - 1 and 2**31, and 2**40, are rows too)
    facts = {"e": [(3000000001, -1), (-5, -1), (7, -2 ** 31), (9, -2 ** 40), (2 ** 32 - 1, 2 ** 32 - 1),
                   (8, 2 ** 31), (10, 2 ** 40), (11, 0)]}
    first = relations_after_run(program, facts, True, monkeypatch)
    assert first == relations_after_run(program, facts, False, monkeypatch)
    assert (first["neg"], first["low"], first["far"]) == ([(-5,), (3000000001,)], [(7,)], [(9,)])
    cold = pickle.loads(pickle.dumps(program))
    saved = cold.run_cache["schema"].tables.bound
    widths = {rels: [b.plan.__reduce__()[1][1] for b in known.values()] for rels, known in saved.items()}
    assert widths == {("neg",): [4], ("low",): [4], ("far",): [8]}
    bound = []
    real = native_db._plan_words
    monkeypatch.setattr(native_db, "_plan_words", lambda *args: bound.append(1) or real(*args))
    assert relations_after_run(cold, facts, True, monkeypatch) == first and bound == []   # (the saved plans ran)
