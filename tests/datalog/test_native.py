"""The C evaluation of rank-ordered strata (sdylog.datalog._native) against
the Python one: the same relations, the same errors, and the cases that
keep the Python path."""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdylog.datalog import make_engine, memory_engine, parse_program, ranked
from sdylog.datalog.engine import needed_strata
from sdylog.datalog.native_plan import _native, native_module, plan_words
from sdylog.ir.diagnostics import SdylogError
from test_ranked import VORONOI  # (pytest puts this directory on sys.path)

pytestmark = pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built "
                                "(no C compiler at install time): the Python path is tested elsewhere")


class Counting:
    """Engines made while it is in place hold their relations in C (or not:
    SDYLOG_NATIVE=0); it counts the rank-ordered strata C evaluated
    (`done`) and those it handed back (`handed_back`: Python evaluated
    them again), from native_db.run_strata's answers."""

    def __init__(self, mp, use_native: bool):
        self.done = self.handed_back = 0
        mp.setenv("SDYLOG_NATIVE", "1" if use_native else "0")
        real = memory_engine.run_strata

        def counting(db, indexes, program, strata, *rest):
            rounds, aborted = real(db, indexes, program, strata, *rest)
            self.done += sum(s.subsumptive for s in strata[:len(rounds)])
            self.handed_back += aborted and strata[len(rounds)].subsumptive
            return rounds, aborted
        mp.setattr(memory_engine, "run_strata", counting)

    @property
    def runs(self) -> tuple[int, int]:
        return self.done, self.handed_back


def evaluate(text, facts, *, use_native, provenance=False):
    """Every relation after a run (or the error's text), and the
    rank-ordered strata C evaluated and handed back (Counting.runs)."""
    with pytest.MonkeyPatch.context() as mp:
        counting = Counting(mp, use_native)
        with make_engine(parse_program(text, "gen.dl"), "memory", provenance=provenance) as e:
            for name, rows in facts.items():
                e.load(name, rows)
            try:
                e.run()
            except SdylogError as err:
                return str(err), counting.runs
            return {r: e.read(r) for r in e.relations}, counting.runs


# ---- generated programs: subsumption with ties, negation, arithmetic, lowered ranks ----
HEAD = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl block(x: number)
.decl seed(x: number, l: number, r: number)
.decl lab(x: number, l: number, r: Rank)
.decl best(x: number, r: Rank)
lab(x, l, r) :- seed(x, l, r).
best(x, r) :- lab(x, _, r).
"""
OPTIONAL_RULES = [
    "lab(y, l, r + w) :- lab(x, l, r), edge(x, y, w), !block(y).",
    "lab(y, l, max(r, w * {k})) :- lab(x, l, r), edge(x, y, w), l % 2 = 0.",
    "lab(y, l + 1, r + (w / {k})) :- lab(x, l, r), edge(x, y, w), l < {k}.",
    "lab(y, l, r - {k}) :- lab(x, l, r), edge(x, y, w), w > 2.",   # may lower ranks: an error
    "lab(y, l, r + 1) :- best(x, r), edge(x, y, _), seed(y, l, _), !block(x).",
    "best(y, min(r + w, {k} * 3)) :- best(x, r), edge(x, y, w), y != x.",
]
SUBSUMPTIONS = [
    "lab(x, l1, r1) <= lab(x, l2, r2) :- l1 != l2, r2 <= r1.",   # equal ranks tie
    "lab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.",
    "lab(x, l1, r1) <= lab(x, l2, r2) :- l2 < l1, r2 + {k} <= r1.",
    "best(x, r1) <= best(x, r2) :- r2 < r1.",
    "best(x, r1) <= best(x, r2) :- r2 <= r1, block(x).",
]


@st.composite
def programs(draw):
    k = draw(st.integers(1, 4))
    rules = draw(st.lists(st.sampled_from(OPTIONAL_RULES), min_size=1, max_size=4, unique=True))
    # (with rule 0 and a cycle, ranks grow without end unless a smaller one of
    # the same label dominates: 1 and 3 are always there)
    subs = [SUBSUMPTIONS[1], SUBSUMPTIONS[3]] + draw(st.lists(st.sampled_from(SUBSUMPTIONS[0:3:2] + SUBSUMPTIONS[4:]),
                                                               max_size=2, unique=True))
    text = HEAD + "\n".join(r.format(k=k) for r in rules + subs) + "\n"
    node = st.integers(0, 7)
    facts = {
        "edge": draw(st.lists(st.tuples(node, node, st.integers(1, 4)), max_size=20)),
        "block": draw(st.lists(st.tuples(node), max_size=3)),
        "seed": draw(st.lists(st.tuples(node, st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=4)),
    }
    return text, facts


@settings(max_examples=150, deadline=None)
@given(programs())
def test_generated_programs_give_the_same_relations_and_errors(program):
    assert_c_agrees_with_python(*program)


def assert_c_agrees_with_python(text, facts):
    py, _ = evaluate(text, facts, use_native=False)
    c, runs = evaluate(text, facts, use_native=True)
    assert c == py
    if not isinstance(py, str):   # (an error stops at its stratum)
        assert sum(runs) == sum(s.subsumptive for s in needed_strata(parse_program(text), None))


# ---- ranks of two columns (phase, r), compared in that order ----
PHASED_HEAD = """
.type Rank <: number
.type Phase <: Rank
.decl edge(x: number, y: number, w: number)
.decl seed(x: number, l: number, r: number)
.decl lab(x: number, l: number, phase: Phase, r: Rank)
lab(x, l, 0, r) :- seed(x, l, r).
lab(x, l1, p1, r1) <= lab(x, l, p2, r2) :- l1 = l, (p2 < p1 ; p2 = p1, r2 < r1).
"""
PHASED_RULES = [
    "lab(y, l, p, r + w) :- lab(x, l, p, r), edge(x, y, w).",
    "lab(y, l, p + 1, 0) :- lab(x, l, p, r), edge(x, y, w), w > 2, p < 3, r >= 0.",   # later phase, smaller r
    "lab(y, l, p, r - {k}) :- lab(x, l, p, r), edge(x, y, w), w = 1.",   # may lower ranks: an error
    "lab(x, l1, p1, r1) <= lab(x, l2, p2, r2) :- l1 != l2, (p2 < p1 ; p2 = p1, r2 <= r1).",   # equal ranks tie
]


@st.composite
def phased_programs(draw):
    k = draw(st.integers(1, 3))
    rules = draw(st.lists(st.sampled_from(PHASED_RULES), min_size=1, max_size=4, unique=True))
    node = st.integers(0, 7)
    facts = {
        "edge": draw(st.lists(st.tuples(node, node, st.integers(1, 4)), max_size=20)),
        "seed": draw(st.lists(st.tuples(node, st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=4)),
    }
    return PHASED_HEAD + "\n".join(r.format(k=k) for r in rules) + "\n", facts


@settings(max_examples=100, deadline=None)
@given(phased_programs())
def test_ranks_of_several_columns_give_the_same_relations_and_errors(program):
    assert_c_agrees_with_python(*program)


def test_the_rank_lowering_error_names_the_rule():
    text = HEAD + "lab(y, l, r - 5) :- lab(x, l, r), edge(x, y, _).\nlab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.\n"
    facts = {"edge": [(0, 1, 1)], "seed": [(0, 0, 9)]}
    py, _ = evaluate(text, facts, use_native=False)
    c, runs = evaluate(text, facts, use_native=True)
    assert runs == (0, 1)   # (C hands it back: Python reports the rule)
    assert c == py
    assert c.startswith("gen.dl:10:") and "derived a tuple of rank 4 from tuples of rank 9" in c


def test_a_rank_ordered_stratum_keeps_its_plan_across_engines(monkeypatch):
    """Run again on the same facts, the stratum takes the plan made first
    (plan.PlanCache, per program). The plan names rules by clause: an
    engine that numbered another rule first binds its own rule ids to the
    same plan, and its error names the same rule."""
    program = parse_program(HEAD + "lab(y, l, r - 5) :- lab(x, l, r), edge(x, y, _).\n"
                            "lab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.\n", "gen.dl")
    prepared = []
    real = ranked.RankedStratum._plan
    monkeypatch.setattr(ranked.RankedStratum, "_plan",
                        lambda self, *a, **k: prepared.append(1) or real(self, *a, **k))

    def run(numbered_first=None):
        prepared.clear()
        with make_engine(program, "memory") as e:
            if numbered_first is not None:
                e._rule_id(program, numbered_first)
            e.load("edge", [(0, 1, 1)])
            e.load("seed", [(0, 0, 9)])
            with pytest.raises(SdylogError) as err:
                e.run()
            return str(err.value), len(prepared)
    first = run()
    assert first[0].startswith("gen.dl:10:") and first[1] == 1
    assert run() == (first[0], 0)
    assert run(numbered_first=1) == (first[0], 0)   # (clause 1: best(x, r) :- lab(x, _, r))


# (a rank-ordered stratum with a symbol column; test_ranked.py checks its result)
SYMBOLS = VORONOI


def test_symbols_are_interned():
    facts = {"edge": [(0, 1), (1, 2), (3, 2)], "seed": [(0, "a", 0), (3, "b", 0)]}
    got, runs = evaluate(SYMBOLS, facts, use_native=True)
    assert runs == (1, 0)
    assert got["reach"] == [(0, "a", 0), (1, "a", 1), (2, "b", 1), (3, "b", 0)]
    assert got == evaluate(SYMBOLS, facts, use_native=False)[0]


# ---- the Python path ----


@pytest.mark.parametrize("rule, fact", [
    # overflows 64 bits: Python's integers give the exact result
    ("lab(y, l, r * 4611686018427387904) :- lab(x, l, r), edge(x, y, _).", (0, 0, 3)),
    # Python's error message for a division by zero
    ("lab(y, l, r + r / w) :- lab(x, l, r), edge(x, y, w).", (0, 0, 3)),
])
def test_what_c_cannot_compute_is_evaluated_in_python(rule, fact):
    text = HEAD + rule + "\nlab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.\n"
    facts = {"edge": [(0, 1, 0), (1, 2, 0)], "seed": [fact]}
    py, _ = evaluate(text, facts, use_native=False)
    c, runs = evaluate(text, facts, use_native=True)
    assert runs == (0, 1)   # tried, handed back
    assert c == py
    if "4611686018427387904" in rule:
        assert (1, 0, 3 * 4611686018427387904) in py["lab"]
    else:
        assert "division by zero" in py


def test_a_rule_that_does_not_lower_keeps_the_python_path():
    text = HEAD + "lab(y, l, r ^ 2) :- lab(x, l, r), edge(x, y, _).\nlab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.\n"
    facts = {"edge": [(0, 1, 1)], "seed": [(0, 0, 3)]}
    got, runs = evaluate(text, facts, use_native=True)
    assert runs == (0, 0)
    assert got["lab"] == [(0, 0, 3), (1, 0, 9)]


def test_sdylog_native_0_and_provenance_keep_the_python_path(monkeypatch):
    facts = {"edge": [(0, 1, 1)], "seed": [(0, 0, 3)]}
    text = HEAD + SUBSUMPTIONS[1] + "\n" + OPTIONAL_RULES[0] + "\n"
    monkeypatch.setenv("SDYLOG_NATIVE", "0")
    assert native_module() is None
    monkeypatch.delenv("SDYLOG_NATIVE")
    assert native_module() is _native
    got, runs = evaluate(text, facts, use_native=True, provenance=True)
    assert runs == (0, 0)
    assert got["lab"] == [(0, 0, 3), (1, 0, 4)]


# ---- the propagation program on corpus models ----
CORPUS = os.environ.get("SDYLOG_CORPUS") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                                         "corpus", "jax")


@pytest.mark.parametrize("model", ["mlp", "scan_rnn", "transformer_L2"])
def test_propagation_gives_the_same_relations_and_output(model, monkeypatch):
    import sdylog.datalog as datalog
    from sdylog.ir import parse_module, print_module
    from sdylog.passes import PassContext, driver

    path = os.path.join(CORPUS, model + ".mlir")
    if not os.path.exists(path):
        pytest.skip(f"corpus model {path} not found (set SDYLOG_CORPUS)")
    with open(path) as f:
        text = f.read()
    results = {}
    real = datalog.make_engine
    for use_native in (False, True):
        counting = Counting(monkeypatch, use_native)
        engines = []
        monkeypatch.setattr(datalog, "make_engine", lambda *a, **k: engines.append(real(*a, **k)) or engines[-1])
        # (as `sdylog opt` does, but every relation derived and kept: derive="all")
        module = parse_module(text, path)
        with module.context:
            driver.run_passes(module, driver.parse_flags(["-sdy-propagation-pipeline"]),
                              PassContext(filename=path, derive="all"))
            out = print_module(module, verified=True)
        # propagation's engine, then the export's non-full reshard step's
        results[use_native] = (out, [{r: engine.read(r) for r in engine.relations} for engine in engines])
        assert counting.runs == ((1, 0) if use_native else (0, 0))
    assert results[True] == results[False]


# A rank of five columns (more than the C rank holds): a phase, three levels
# carried along unchanged, and the distance.
FIVE_COLUMN_RANK = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl source(x: number)
.decl dist(x: number, a: Rank, b: Rank, c: Rank, e: Rank, d: Rank)
dist(x, 0, 0, 0, 0, 0) :- source(x).
dist(y, a, b, c, e, d + w) :- dist(x, a, b, c, e, d), edge(x, y, w).
dist(x, a, b, c, e, d1) <= dist(x, a, b, c, e, d2) :- d2 < d1.
"""


def test_ranks_of_more_columns_than_c_holds_keep_the_python_path():
    assert _native.MAXRANK == 4
    facts = {"edge": [(0, 1, 5), (1, 2, 1), (0, 2, 9), (2, 3, 2)], "source": [(0,)]}
    with_c, runs = evaluate(FIVE_COLUMN_RANK, facts, use_native=True)
    assert runs == (0, 0)
    assert with_c == evaluate(FIVE_COLUMN_RANK, facts, use_native=False)[0]
    assert with_c["dist"] == [(0, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 5), (2, 0, 0, 0, 0, 6), (3, 0, 0, 0, 0, 8)]
    # (C refuses a plan with such a rank)
    with pytest.raises(ValueError, match="rank columns out of range"):
        _native.Database([(6, (False,) * 6)]).run([[_native.Plan(plan_words([0], [], [], [[]], [], [(1, 2, 3, 4, 5)], [[]]))]])
