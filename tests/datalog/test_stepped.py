"""Stepped strata (sdylog/datalog/stepped.py): a greedy loop in Datalog,
step by step, equals the same loop in Python on every engine; the forms a
stepped rule may take, and the errors for the others."""
import random

import pytest

from sdylog.datalog import make_engine, memory_engine, parse_program
from sdylog.datalog.native_plan import _native
from sdylog.datalog.stepped import AUX_PARTS, aux
from sdylog.ir.diagnostics import SdylogError

# Greedy matching: at each step, the heaviest edge whose ends are both free
# joins the matching; its ends are no longer free at the next step.
GREEDY = """
.type Step <: number
.decl edge(a: number, b: number, w: number)
.input edge
.decl free(k: Step, n: number)
.decl cand(k: Step, a: number, b: number, w: number)
.decl best(k: Step, w: number)
.decl matched(k: Step, a: number, b: number)
.decl picked(k: Step, n: number)
free(0, n) :- edge(n, _, _) ; edge(_, n, _).
cand(k, a, b, w) :- edge(a, b, w), free(k, a), free(k, b).
best(k, w) :- cand(k, _, _, _), w = max x : { cand(k, _, _, x) }.
matched(k, a, b) :- best(k, w), cand(k, a, b, w).
picked(k, n) :- matched(k, n, _) ; matched(k, _, n).
free(k + 1, n) :- free(k, n), best(k, _), !picked(k, n).
.decl matching(a: number, b: number, at: number)
matching(a, b, k) :- matched(k, a, b).
.decl rounds(n: number)
rounds(n) :- n = count : { best(_, _) }.
"""

MODES = ["c", "python", "provenance"]

# Seeds at the steps `start` says; n dies past 2: the steps stop, then start again at a later seed.
SEEDS_LATER = """
.type Step <: number
.decl start(k: number, n: number)
.input start
.decl alive(k: Step, n: number)
.decl dead(k: Step, n: number)
alive(k, n) :- start(k, n).
dead(k, n) :- alive(k, n), n > 2.
alive(k + 1, n + 1) :- alive(k, n), !dead(k, n).
"""


def engine_for(mode, monkeypatch, text):
    if mode == "c" and _native is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
    return make_engine(parse_program(text, "stepped.dl"), "memory", provenance=mode == "provenance")


def greedy_matching(edges):
    free, out = {n for a, b, _ in edges for n in (a, b)}, []
    for a, b, w in sorted(edges, key=lambda e: -e[2]):
        if a in free and b in free:
            free -= {a, b}
            out.append((a, b))
    return out


def random_graph(seed, nodes=12, edges=30):
    rng = random.Random(seed)
    weights = rng.sample(range(1, 1000), edges)
    out = set()
    while len(out) < edges:
        a, b = sorted(rng.sample(range(nodes), 2))
        if all((a, b) != (x, y) for x, y, _ in out):
            out.add((a, b, weights[len(out)]))
    return sorted(out)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_matching_equals_the_loop_in_python(mode, seed, monkeypatch):
    edges = random_graph(seed)
    expected = greedy_matching(edges)
    with engine_for(mode, monkeypatch, GREEDY) as e:
        e.load("edge", edges)
        e.run()
        got = e.read("matching")
        assert [(a, b) for a, b, _ in sorted(got, key=lambda r: r[2])] == expected
        assert [k for _, _, k in sorted(got, key=lambda r: r[2])] == list(range(len(expected)))
        assert e.read("rounds") == [(len(expected),)]
        # every step's tuples are kept: the candidates of step 0 are all edges
        assert {(a, b, w) for k, a, b, w in e.read("cand") if k == 0} == set(edges)


def test_provenance_explains_a_stepped_tuple_with_the_rules_as_written(monkeypatch):
    edges = random_graph(0)
    with engine_for("provenance", monkeypatch, GREEDY) as e:
        e.load("edge", edges)
        e.run()
        k, a, b = e.read("matched")[-1]
        text = e.explain("matched", (k, a, b)).format()
    assert "@" not in text                  # the rules as written, not their step forms
    assert "stepped.dl:" in text and f"free({k}, {a})" in text


def test_seeds_at_later_steps_start_again_after_a_step_derived_nothing(monkeypatch):
    for mode in ("c", "python"):
        with engine_for(mode, monkeypatch, SEEDS_LATER) as e:
            e.load("start", [(0, 1), (10, 2)])
            e.run()
            assert e.read("alive") == [(0, 1), (1, 2), (2, 3), (10, 2), (11, 3)]
            assert e.read("dead") == [(2, 3), (11, 3)]



# Seeds from `start` and from facts loaded into `a` itself; a negation and
# an aggregate within a step, two next-step rules (for the random sample below).
TWO_RELATIONS = """
.type Step <: number
.decl start(k: number, n: number)
.input start
.decl a(k: Step, n: number)
.decl b(k: Step, n: number)
.decl big(k: Step, n: number)
a(k, n) :- start(k, n).
b(k, n) :- start(k, n), n % 3 = 0.
big(k, m) :- a(k, _), m = max x : { a(k, x) }.
b(k, n) :- a(k, n), !big(k, n).
a(k + 1, n + 1) :- b(k, n), n < 12, k < 15.
a(k + 1, n) :- a(k, n), !b(k, n), n < 9, k < 15.
"""

# alive's m overflows 64 bits at the third step when a start's m is 10**9.
OVERFLOWS = """
.type Step <: number
.decl start(k: number, n: number, m: number)
.input start
.decl alive(k: Step, n: number, m: number)
.decl dead(k: Step, n: number)
alive(k, n, m) :- start(k, n, m).
dead(k, n) :- alive(k, n, _), n > 4.
alive(k + 1, n + 1, m * 1000000) :- alive(k, n, m), !dead(k, n).
.decl total(n: number)
total(c) :- c = count : { alive(_, _, _) }.
"""


class SteppedRuns:
    """Runs of one parsed program, each on a fresh engine with its facts
    (relation -> rows), in C or in Python (SDYLOG_NATIVE=0); `in_python`
    counts the StepEvaluation runs (the stepped strata Python evaluated)
    of the last run, `calls` records its db.run calls (status, strata
    done, what each stratum was offered), `batches` the most strata the
    next call would offer after each (ndb.batch)."""

    def __init__(self, text, monkeypatch):
        from sdylog.datalog import native_db, stepped
        from test_kept_relations import _Run   # (pytest puts this directory on sys.path)
        if _native is None:
            pytest.skip("the C extension sdylog.datalog._native is not built")
        self.program = parse_program(text, "stepped.dl")
        self.reference = parse_program(text, "reference.dl")
        self.mp = monkeypatch
        self.in_python, self.calls, self.batches = 0, [], []
        real = stepped.StepEvaluation.run

        def counted(evaluation):
            self.in_python += 1
            return real(evaluation)
        monkeypatch.setattr(stepped.StepEvaluation, "run", counted)
        real_strata = native_db.run_strata

        def recorded(ndb, *args):
            def run(offered, *frees):
                out = ndb.db.real_run(offered, *frees)
                self.calls.append((out[0], out[1], offered))
                return out
            ndb.db = _Run(ndb.db, run)
            try:
                return real_strata(ndb, *args)
            finally:
                ndb.db = ndb.db.real
                self.batches.append(ndb.batch)
        monkeypatch.setattr(memory_engine, "run_strata", recorded)

    def run(self, facts, native=True) -> dict:
        self.mp.setenv("SDYLOG_NATIVE", "1" if native else "0")
        self.in_python, self.calls, self.batches = 0, [], []
        with make_engine(self.program if native else self.reference, "memory") as e:
            for name, rows in facts.items():
                e.load(name, rows)
            e.run()
            return {r: e.read(r) for r in e.relations}

    def assert_c_runs_it_as_python(self, facts) -> None:
        """Run on `facts` twice: the second run evaluates the stepped
        strata in C (db.c's run_stepped: the first planned their seed and
        step programs), both giving Python's relations."""
        want = self.run(facts, native=False)
        assert self.run(facts) == want
        assert self.run(facts) == want
        assert self.in_python == 0
        assert any(isinstance(stratum, tuple) for _, _, offered in self.calls for stratum in offered)


@pytest.mark.parametrize("text, facts", [
    (GREEDY, {"edge": random_graph(0)}),
    (GREEDY, {"edge": random_graph(1)}),
    (GREEDY, {"edge": random_graph(2, nodes=30, edges=200)}),
    (SEEDS_LATER, {"start": [(0, 1), (10, 2)]}),       # (a step deriving nothing, then the next seeds' step)
    (SEEDS_LATER, {"start": [(3, 0), (4, 7), (9, 1)]}),
    (SEEDS_LATER, {"start": []}),                      # (no seeds: no step)
    (TWO_RELATIONS, {"start": [(0, 3), (2, 5)], "a": [(1, 4), (6, 0)]}),   # (facts loaded into `a`: seeds too)
])
def test_a_stepped_stratum_runs_in_c_once_its_programs_are_planned(text, facts, monkeypatch):
    SteppedRuns(text, monkeypatch).assert_c_runs_it_as_python(facts)


def test_a_stepped_stratum_runs_in_c_as_in_python_on_random_seeds(monkeypatch):
    """A small fixed-seed sample (start and `a` facts at random steps), on
    one program: plans kept from one run meet the next run's sizes."""
    runs = SteppedRuns(TWO_RELATIONS, monkeypatch)
    rng = random.Random(1)
    for _ in range(20):
        start = sorted({(rng.randrange(0, 8), rng.randrange(0, 10)) for _ in range(rng.randrange(0, 7))})
        loaded = sorted({(rng.randrange(0, 8), rng.randrange(0, 10)) for _ in range(rng.randrange(0, 3))})
        runs.assert_c_runs_it_as_python({"start": start, "a": loaded})


def test_a_stepped_stratum_that_overflows_in_c_is_handed_back(monkeypatch):
    """An overflow inside a step: C hands the stratum back (its relations
    as before it), Python evaluates it with its integers; the next run
    fitting 64 bits is C's again."""
    runs = SteppedRuns(OVERFLOWS, monkeypatch)
    small, big = {"start": [(0, 3, 1)]}, {"start": [(0, 3, 1), (0, 2, 10 ** 9)]}
    runs.assert_c_runs_it_as_python(small)
    want = runs.run(big, native=False)
    assert (2, 4, 10 ** 21) in want["alive"]
    assert runs.run(big) == want and runs.in_python == 1
    status, done, offered = runs.calls[0]
    assert (status, type(offered[done])) == ("abort", tuple)
    runs.assert_c_runs_it_as_python(small)


def test_a_stepped_stratum_not_planned_yet_goes_to_python_without_shrinking_the_batches(monkeypatch):
    """Before its programs' strata have plans a stepped stratum is Python's:
    with no seed plan the call into C ends before it; with no step plan (a
    run without seeds took no step) C hands it back if it must step.
    Neither is offered again alone (to go stale again), nor makes the later
    calls offer one stratum at a time (run_strata: ndb.batch)."""
    text = SEEDS_LATER.replace("alive(k, n) :- start(k, n).", """
    .decl s2(k: number, n: number)
    s2(k, n) :- start(k, n).
    alive(k, n) :- s2(k, n).
    .decl after(n: number)
    after(n) :- alive(_, n).
    .decl after2(n: number)
    after2(n) :- after(n), !s2(_, n).""")
    runs = SteppedRuns(text, monkeypatch)
    seeds, none = {"start": [(0, 1), (10, 2)]}, {"start": []}

    def calls():
        return [(status, done, [type(s).__name__ for s in offered]) for status, done, offered in runs.calls]
    want = runs.run(seeds, native=False)
    assert want["after2"] == [(3,)]
    assert runs.run(seeds) == want and runs.in_python == 1
    assert calls()[0] == ("ok", 1, ["list"])   # (s2's stratum, then the batch ended)
    assert "tuple" not in str(calls())
    assert runs.run(seeds) == want and runs.in_python == 0
    assert calls() == [("ok", 4, ["list", "tuple", "list", "list"])]
    # (a program whose stratum took no step: its step program has no plan)
    runs.program = parse_program(text, "stepped.dl")
    runs.run(none)
    runs.run(none)
    assert runs.in_python == 0 and calls() == [("ok", 4, ["list", "tuple", "list", "list"])]
    assert runs.run(seeds) == want and runs.in_python == 1
    assert calls()[0] == ("stale", 1, ["list", "tuple", "list", "list"])
    assert str(calls()[1:]).count("tuple") == 0
    assert runs.batches[0] > 1    # (the next call offered as many strata as it would have)
    assert runs.run(seeds) == want and runs.in_python == 0


@pytest.mark.parametrize("rule, message", [
    ("a(k + 2, n) :- a(k, n), !b(k, n).", r"the head's Step must be k \(the same step\) or k \+ 1"),
    ("a(k + 1, n) :- a(k, n), b(j, n).", "read at steps j, k: one step variable only"),
    ("a(k + 1, n) :- a(k, n), !b(k * 1, n).", "the Step column of 'b' must be a variable"),
    ("a(k + 1, n) :- base(k, n), !b(k, n).", "the step variable k must be bound by a relation of the "
                                              "stratum read positively"),
])
def test_stepped_rules_of_other_forms_are_errors(rule, message):
    text = f"""
    .type Step <: number
    .decl base(k: number, n: number)
    .decl a(k: Step, n: number)
    .decl b(k: Step, n: number)
    a(k, n) :- base(k, n).
    b(k, n) :- a(k, n), n > 3.
    {rule}
    """
    with pytest.raises(SdylogError, match=message):
        parse_program(text, "bad.dl")


def test_the_auxiliary_relations_names_are_the_programs_to_avoid():
    assert [aux("a", part) for part in AUX_PARTS] == ["a__seed", "a__prev", "a__now"]
    with pytest.raises(ValueError, match="no auxiliary relation part 'next'"):
        aux("a", "next")
    text = """
    .type Step <: number
    .decl base(k: number, n: number)
    .decl a(k: Step, n: number)
    .decl a__prev(k: number, n: number)
    a(k, n) :- base(k, n).
    a(k + 1, n) :- a(k, n), n < 3.
    """
    with pytest.raises(SdylogError, match="relation 'a__prev' has the name of an auxiliary relation"):
        parse_program(text, "bad.dl")


def test_negation_within_one_step_must_stratify():
    text = """
    .type Step <: number
    .decl base(n: number)
    .decl a(k: Step, n: number)
    .decl b(k: Step, n: number)
    a(0, n) :- base(n).
    b(k, n) :- a(k, n), !a(k, n + 1).
    a(k, n + 1) :- a(k, n), !b(k, n), n < 5.
    a(k + 1, n) :- b(k, n).
    """
    with pytest.raises(SdylogError, match="cannot stratify"):
        parse_program(text, "cycle.dl")


def test_a_negation_cycle_without_step_columns_is_still_an_error():
    text = """
    .decl base(n: number)
    .decl a(n: number)
    a(n) :- base(n), !a(n + 1).
    """
    with pytest.raises(SdylogError, match="cannot stratify"):
        parse_program(text, "plain.dl")


def test_a_stepped_stratum_with_subsumptive_rules_is_an_error():
    text = """
    .type Step <: number
    .type Rank <: number
    .decl base(n: number)
    .decl a(k: Step, n: number, r: Rank)
    a(0, n, 0) :- base(n).
    a(k + 1, n, r) :- a(k, n, r), !a(k, n + 1, _).
    a(k, n, r1) <= a(k, n, r2) :- r2 < r1.
    """
    with pytest.raises(SdylogError, match="rank order or step by step, not both"):
        parse_program(text, "both.dl")
