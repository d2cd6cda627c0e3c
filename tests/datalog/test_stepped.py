"""Stepped strata (sdylog/datalog/stepped.py): a greedy loop in Datalog,
step by step, equals the same loop in Python on every engine; the forms a
stepped rule may take, and the errors for the others."""
import random

import pytest

from sdylog.datalog import make_engine, parse_program
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



@pytest.mark.parametrize("text, facts", [
    (GREEDY, {"edge": random_graph(1)}),
    (SEEDS_LATER, {"start": [(0, 1), (10, 2)]}),       # (a step deriving nothing, then the next seeds' step)
    (SEEDS_LATER, {"start": [(3, 0), (4, 7), (9, 1)]}),
])
def test_a_stepped_stratum_runs_in_c_once_its_programs_are_planned(text, facts, monkeypatch):
    """The first run plans the seed and step programs (in Python: C finds no
    plan for them); the next runs of the engine evaluate the stepped stratum
    in C (db.c's run_stepped), giving Python's relations."""
    from sdylog.datalog import stepped
    if _native is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    in_python = []
    real = stepped.StepEvaluation.run
    monkeypatch.setattr(stepped.StepEvaluation, "run", lambda self: in_python.append(1) or real(self))
    program = parse_program(text, "stepped.dl")
    want = {}
    for mode in ("python", "c"):
        monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
        with make_engine(program, "memory") as e:
            for name, rows in facts.items():
                e.load(name, rows)
            for run in range(3):
                in_python.clear()
                e.run()
                got = {r: e.read(r) for r in e.relations}
                assert got == want.setdefault("rows", got)
                if mode == "c" and run > 0:
                    assert in_python == []


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
