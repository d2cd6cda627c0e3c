"""Subsumptive rules and the rank-ordered evaluation of their strata."""
import heapq
import random

import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.printer import print_program
from sdylog.ir.diagnostics import SdylogError

SHORTEST = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl source(x: number)
.decl dist(x: number, d: Rank)
dist(x, 0) :- source(x).
dist(y, d + w) :- dist(x, d), edge(x, y, w).
dist(x, d1) <= dist(x, d2) :- d2 < d1.
"""


def dijkstra(edges, sources):
    adj = {}
    for x, y, w in edges:
        adj.setdefault(x, []).append((y, w))
    best = {}
    heap = [(0, s) for s in sources]
    while heap:
        d, x = heapq.heappop(heap)
        if x in best:
            continue
        best[x] = d
        for y, w in adj.get(x, ()):
            if y not in best:
                heapq.heappush(heap, (d + w, y))
    return sorted(best.items())


@pytest.fixture(params=["c", "python"])
def engine(request, monkeypatch):
    """The engine's name; its relations held in C or in Python."""
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if request.param == "python" else "1")
    return "memory"


@pytest.mark.parametrize("seed", range(5))
def test_shortest_paths_match_dijkstra(seed, engine):
    rnd = random.Random(seed)
    edges = {(rnd.randrange(30), rnd.randrange(30), rnd.randrange(1, 9)) for _ in range(90)}
    with make_engine(parse_program(SHORTEST), engine) as e:
        e.load("edge", sorted(edges))
        e.load("source", [(0,), (7,)])
        e.run()
        assert e.read("dist") == dijkstra(edges, [0, 7])


# Zero-weight edges derive a tuple again in its own rank, in a later wave of
# that rank (another path): the C evaluator finds such tuples in a set of the
# current rank's rows only, forgotten when the rank changes (ranked.c:
# set_forget; ranks of hundreds of rows here, beyond the size it keeps).
@pytest.mark.parametrize("seed", range(3))
def test_a_tuple_derived_again_in_its_rank_is_kept_once(seed, engine):
    rnd = random.Random(seed)
    edges = {(rnd.randrange(300), rnd.randrange(300), rnd.randrange(3)) for _ in range(1500)}
    with make_engine(parse_program(SHORTEST), engine) as e:
        e.load("edge", sorted(edges))
        e.load("source", [(0,), (7,)])
        e.run()
        assert e.read("dist") == dijkstra(edges, [0, 7])
        assert e.size("dist") == len(e.read("dist"))   # (no row twice)


# A seed clause over a relation empty when the stratum is planned is left out
# of its plan; the plan is kept only for runs where that relation is empty
# again (a size of 0 matches only 0), so a later run with rows re-plans.
SEEDED_LATER = SHORTEST + """
.decl alt(x: number)
.decl alt2(x: number)
alt2(x) :- alt(x).
dist(x, 1) :- alt2(x), source(_).
"""


def test_a_seed_over_an_empty_relation_counts_when_a_later_run_fills_it(engine):
    edges = [(0, 1, 5), (1, 2, 5), (3, 2, 1)]
    program = parse_program(SEEDED_LATER)
    for alt in ([], [(3,)], [], [(3,)], [(3,)], []):
        with make_engine(program, engine) as e:
            e.load("edge", edges)
            e.load("source", [(0,)])
            e.load("alt", alt)
            e.run()
            assert e.read("dist") == dijkstra(edges + [(0, 3, 1)] * bool(alt), [0])


# First arrival wins per node; a label that loses a node does not travel on
# from it (unlike a stratified "min after the fact"), and equal ranks tie.
VORONOI = """
.type Rank <: number
.decl edge(x: number, y: number)
.decl seed(x: number, label: symbol, r: number)
.decl reach(x: number, label: symbol, r: Rank)
reach(x, l, r) :- seed(x, l, r).
reach(y, l, r + 1) :- reach(x, l, r), edge(x, y).
reach(x, l1, r1) <= reach(x, l2, r2) :- l1 != l2, r2 <= r1.
"""


def test_the_first_label_to_arrive_owns_a_node_and_ties_leave_it_empty(engine):
    with make_engine(parse_program(VORONOI), engine) as e:
        # a: 0-1-2-3-4 ; b starts at 4 and goes 4-3 ; 5 is reached by both at rank 1
        e.load("edge", [(0, 1), (1, 2), (2, 3), (3, 4), (4, 3), (10, 5), (11, 5), (5, 6)])
        e.load("seed", [(0, "a", 0), (4, "b", 0), (10, "a", 0), (11, "b", 0)])
        e.run()
        got = {(x, l) for x, l, _ in e.read("reach")}
        assert {(0, "a"), (1, "a"), (2, "a"), (4, "b"), (3, "b")} <= got
        assert (3, "a") not in got and (2, "b") not in got
        # 5: both labels at rank 1 subsume each other; nothing reaches 6
        assert not any(x in (5, 6) for x, _ in got)


def test_a_rule_that_lowers_the_rank_is_an_error(engine):
    prog = parse_program("""
.type Rank <: number
.decl e(x: number, y: number)
.decl r(x: number, k: Rank)
r(0, 5).
r(y, k - 1) :- r(x, k), e(x, y).
r(x, k1) <= r(x, k2) :- k2 < k1.
""", "lower.dl")
    with make_engine(prog, engine) as e:
        e.load("e", [(0, 1)])
        with pytest.raises(SdylogError, match="must not lower ranks"):
            e.run()


def test_a_subsumptive_stratum_needs_a_rank_column():
    prog = parse_program("""
.decl r(x: number, k: number)
r(0, 5).
r(x, k1) <= r(x, k2) :- k2 < k1.
""", "norank.dl")
    with make_engine(prog, "memory") as e:
        with pytest.raises(SdylogError, match="a column of type Rank"):
            e.run()


# A rank of two columns (phase, d), compared in that order: a hop over a
# "slow" edge goes to the next phase with its distance reset, and any
# distance of phase p comes before every distance of phase p + 1.
PHASED = """
.type Rank <: number
.type Phase <: Rank
.decl edge(x: number, y: number, w: number)
.decl slow(x: number, y: number)
.decl source(x: number)
.decl dist(x: number, phase: Phase, d: Rank)
dist(x, 0, 0) :- source(x).
dist(y, p, d + w) :- dist(x, p, d), edge(x, y, w).
dist(y, p + 1, 0) :- dist(x, p, _), slow(x, y).
dist(x, p1, d1) <= dist(x, p2, d2) :- p2 < p1 ; p2 = p1, d2 < d1.
"""


def phased_dijkstra(edges, slow, sources):
    adj = {}
    for x, y, w in edges:
        adj.setdefault(x, []).append((y, w))
    best = {}
    heap = [((0, 0), s) for s in sources]
    while heap:
        rank, x = heapq.heappop(heap)
        if x in best:
            continue
        best[x] = rank
        p, d = rank
        for y, w in adj.get(x, ()):
            heapq.heappush(heap, ((p, d + w), y))
        for x2, y in slow:
            if x2 == x:
                heapq.heappush(heap, ((p + 1, 0), y))
    return sorted((x, p, d) for x, (p, d) in best.items())


@pytest.mark.parametrize("seed", range(4))
def test_a_rank_of_two_columns_is_compared_column_by_column(seed):
    rnd = random.Random(seed)
    edges = {(rnd.randrange(30), rnd.randrange(30), rnd.randrange(1, 9)) for _ in range(70)}
    slow = {(rnd.randrange(30), rnd.randrange(30)) for _ in range(15)}
    with make_engine(parse_program(PHASED), "memory") as e:
        e.load("edge", sorted(edges))
        e.load("slow", sorted(slow))
        e.load("source", [(0,), (7,)])
        e.run()
        # (a packed rank p * 8 + d would put (1, 0) before (0, 9): not this order)
        assert e.read("dist") == phased_dijkstra(edges, slow, [0, 7])


def test_the_relations_of_a_ranked_stratum_have_ranks_of_one_length():
    prog = parse_program("""
.type Rank <: number
.type Phase <: Rank
.decl a(x: number, p: Phase, k: Rank)
.decl b(x: number, k: Rank)
a(0, 0, 5).
b(x, k) :- a(x, _, k).
a(x, 0, k) :- b(x, k).
a(x, p, k1) <= a(x, p, k2) :- k2 < k1.
""", "mixed.dl")
    with make_engine(prog, "memory") as e:
        with pytest.raises(SdylogError, match="ranks of as many columns"):
            e.run()


def test_subsumption_front_end_checks_and_printing():
    with pytest.raises(SdylogError, match="one relation"):
        parse_program(".decl a(x: number)\n.decl b(x: number)\na(1).\na(x) <= b(x) :- x > 0.\n")
    with pytest.raises(SdylogError, match="ungrounded"):
        parse_program(".type Rank <: number\n.decl a(x: Rank)\na(1).\na(x) <= a(y) :- z > 0.\n")
    prog = parse_program(SHORTEST)
    text = print_program(prog)
    assert "dist(x, d1) <= dist(x, d2) :- d2 < d1." in text
    assert print_program(parse_program(text)) == text


def test_provenance_explains_ranked_tuples(engine):
    with make_engine(parse_program(SHORTEST), engine, provenance=True) as e:
        e.load("edge", [(0, 1, 2), (1, 2, 2), (0, 2, 9)])
        e.load("source", [(0,)])
        e.run()
        assert e.read("dist") == [(0, 0), (1, 2), (2, 4)]
        tree = e.explain("dist", (2, 4)).format()
        assert "dist(1, 2)" in tree and "edge(1, 2, 2)" in tree and "source(0)" in tree


def test_lookups_are_served_by_the_fewest_live_indexes():
    from sdylog.datalog.ranked import _coarse_keys
    asked = {"r": {(0, 1, 2, 3), (0, 1, 2), (0, 3), (0, 1, 3), ()}, "s": {(1,)}, "t": {(0, 1), (1, 2)}}
    assert _coarse_keys(asked) == {("r", (0, 1, 2, 3)): (0, 1, 2), ("r", (0, 1, 3)): (0, 3)}


# a label's tuples at one node are looked up by the node and by (node, label):
# one live index on the node serves both
LABELS = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl seed(x: number, label: number)
.decl lab(x: number, label: number, r: Rank)
lab(x, l, 0) :- seed(x, l).
lab(y, l, r + w) :- lab(x, l, r), edge(x, y, w).
lab(x, l1, r1) <= lab(x, l2, r2) :- l1 != l2, r2 + 2 <= r1.
lab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.
"""


@pytest.mark.parametrize("seed", range(6))
def test_coarser_live_indexes_give_the_same_result(seed, monkeypatch):
    from sdylog.datalog import ranked
    rng = random.Random(seed)
    edges = [(rng.randrange(30), rng.randrange(30), rng.randrange(1, 4)) for _ in range(90)]
    seeds = [(rng.randrange(30), rng.randrange(4)) for _ in range(5)]

    def labels():
        with make_engine(parse_program(LABELS), "memory") as e:
            e.load("edge", edges)
            e.load("seed", seeds)
            e.run()
            return e.read("lab")
    asked = []
    real = ranked._coarse_keys
    monkeypatch.setattr(ranked, "_coarse_keys", lambda keys: asked.append(real(keys)) or asked[-1])
    coarse = labels()
    assert asked == [{("lab", (0, 1)): (0,)}]
    monkeypatch.setattr(ranked, "_coarse_keys", lambda keys: {})
    assert labels() == coarse


def test_grouped_clauses_run_in_turn_on_each_delta_tuple():
    from sdylog.datalog.plan import Context, plan_clause
    from sdylog.datalog.pyeval import Namespace, delta_function
    prog = parse_program("""
    .type Rank <: number
    .decl edge(x: number, y: number, w: number)
    .decl blocked(x: number)
    .decl reach(x: number, r: Rank)
    reach(y, r + w) :- reach(x, r), edge(x, y, w).
    reach(y, r + 100) :- reach(x, r), blocked(x), edge(x, y, _).
    """)
    ns = Namespace()
    ctx = Context(lambda rel: None, frozenset({"reach"}))
    plans = [plan_clause(ctx, c.body, c.head.args, 0, ci, prog.clause_kinds[ci], delta=0, arity=2)
             for ci, c in enumerate(prog.clauses)]
    fn = delta_function(ns, plans)
    edge = {1: [(1, 2, 5), (1, 3, 7)], 2: [(2, 3, 1)]}
    indexes = {("edge", (0,), False): edge, ("blocked", (0,), False): {1: [(1,)]}}
    for name, spec in ns.specs.items():
        ns.globals[name] = indexes[spec]
    out = []
    fn([(1, 0), (2, 4), (9, 1)], lambda ri, tup, rule: out.append((tup, rule)))
    assert sorted(out) == [((2, 5), 0), ((2, 100), 1), ((3, 5), 0), ((3, 7), 0), ((3, 100), 1)]


# `closed` is read only by a subsumptive rule: a run asked for `reach` alone
# must still derive it (at a closed node, the first label to arrive wins).
CLOSED_BY_SUBSUMPTION = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl source(x: number, label: symbol)
.decl blocked(x: number)
.decl closed(x: number)
closed(x) :- blocked(x).
.decl reach(x: number, label: symbol, d: Rank)
reach(x, l, 0) :- source(x, l).
reach(y, l, d + w) :- reach(x, l, d), edge(x, y, w).
reach(x, l1, d1) <= reach(x, l2, d2) :- closed(x), l1 != l2, d2 <= d1.
"""


def test_a_run_for_some_relations_derives_what_their_subsumptive_rules_read(engine):
    with make_engine(parse_program(CLOSED_BY_SUBSUMPTION), engine) as e:
        e.load("edge", [(0, 2, 1), (1, 2, 2)])
        e.load("source", [(0, "a"), (1, "b")])
        e.load("blocked", [(2,)])
        e.run(relations=["reach"])
        assert e.read("reach") == [(0, "a", 0), (1, "b", 0), (2, "a", 1)]


@pytest.mark.parametrize("phases, chosen", [(6, (0, 1)), (2, (0,))])
def test_a_lookup_uses_one_column_only_when_its_index_is_selective_beyond_the_sample(phases, chosen):
    from sdylog.datalog.ranked import StaticIndexes
    # rows in insertion order, phase-major: the first SAMPLE rows hold a new
    # value of column 0 each, though each value has `phases` rows in all
    rows = [(o, ph) for ph in range(phases) for o in range(2500)]
    static = StaticIndexes(lambda rel: rows)
    assert static.index_key("r", (0, 1)) == chosen
    assert static.fanout("r", (0,)) == phases


# Labels that clash drop each other at a node (ties: both), labels that do
# not share it: a node's rows in a live index (by node) lose some of their
# rows in a wave and keep others, and `pair` reads them through it after.
CLASHING = """
.type Rank <: number
.decl edge(x: number, y: number)
.decl seed(x: number, label: number)
.decl clash(a: number, b: number)
.decl lab(x: number, label: number, r: Rank)
.decl pair(x: number, a: number, b: number, r: Rank)
lab(x, l, 0) :- seed(x, l).
lab(y, l, r + 1) :- lab(x, l, r), edge(x, y).
lab(y, l, r + 1) :- pair(x, l, _, r), edge(y, x).
pair(x, a, b, r) :- lab(x, a, r), lab(x, b, r0), a != b, r0 <= r.
lab(x, l1, r1) <= lab(x, l2, r2) :- clash(l1, l2), r2 <= r1.
lab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.
"""


@pytest.mark.parametrize("seed", range(8))
def test_ties_dropped_from_a_node_that_keeps_other_labels_agree_in_c_and_python(seed, monkeypatch):
    rng = random.Random(seed)
    edges = sorted({(rng.randrange(25), rng.randrange(25)) for _ in range(60)})
    seeds = sorted({(rng.randrange(25), rng.randrange(6)) for _ in range(12)})
    clash = [(a, b) for a in range(6) for b in range(6) if a != b and (a + b) % 3 == 0]

    def run(native):
        monkeypatch.setenv("SDYLOG_NATIVE", native)
        with make_engine(parse_program(CLASHING), "memory") as e:
            e.load("edge", edges)
            e.load("seed", seeds)
            e.load("clash", clash)
            e.run()
            return e.read("lab"), e.read("pair")
    assert run("1") == run("0")
