"""The in-memory engine's joins in C against those compiled to Python on programs that
exercise its planner: arguments `x + c` / `x - c` solved for x, lookups on
part of their bound columns (an index already built, or a selective column),
a first lookup by constants only, min/max and division of negative numbers,
clauses over empty relations, and rank-ordered strata whose clauses share one
compiled function per relation."""
import random

import pytest

from hypothesis import given, settings, strategies as st

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.memory_engine import merged_facts
from sdylog.datalog.native_plan import _native

from conftest import held_in

PLANNER = parse_program("""
.decl item(id: number, kind: number, size: number)
.decl link(a: number, b: number, w: number)
.decl step(a: number, p: number)
.decl none(a: number)
.decl next_step(a: number, p: number, q: number)
next_step(a, p, q) :- step(a, q - 1), step(a, p), q = p + 1, step(a, q).
.decl chain(a: number, p: number)
chain(a, p) :- step(a, p), p = 0.
chain(a, p) :- chain(a, p - 1), step(a, p).
.decl by_two(id: number, other: number, w: number)
by_two(i, o, w) :- item(i, k, _), link(i, o, w), item(o, k, _).
by_two(i, o, w) :- link(i, o, w), item(i, 1, _), item(o, 1, s), s > 2.
.decl kind_one(id: number)
kind_one(i) :- item(i, 1, _).
.decl mixed(a: number, b: number, lo: number, hi: number, q: number, m: number)
mixed(a, b, min(w, v), max(w, v), w / 3, w % 3) :- link(a, b, w), link(b, a, v).
.decl dead(a: number)
dead(a) :- item(a, _, _), none(a).
.decl alive(a: number)
alive(a) :- item(a, _, _), !none(a).
.decl shifted(a: number, c: number)
shifted(a, c) :- link(a, b, _), item(b - 2, _, c).
""", "planner.dl")

links = st.sets(st.tuples(st.integers(-4, 9), st.integers(-4, 9), st.integers(-7, 7)), max_size=40)
items = st.sets(st.tuples(st.integers(-4, 12), st.integers(0, 2), st.integers(0, 5)), max_size=30)
steps = st.sets(st.tuples(st.integers(0, 3), st.integers(-1, 6)), max_size=25)


@settings(max_examples=40, deadline=None)
@given(links, items, steps)
def test_c_and_python_agree(link, item, step):
    results = []
    for mode in ("c", "python"):
        with held_in(mode), make_engine(PLANNER, "memory") as e:
            e.load("link", sorted(link))
            e.load("item", sorted(item))
            e.load("step", sorted(step))
            e.run()
            results.append({r: e.read(r) for r in PLANNER.relations})
    assert results[0] == results[1]


def test_solved_arguments_and_arithmetic():
    with make_engine(PLANNER, "memory") as e:
        e.load("step", [(0, -1), (0, 0), (0, 1), (0, 2), (0, 4), (1, 1)])
        e.load("link", [(1, 2, -7), (2, 1, 5), (3, 4, 2)])
        e.load("item", [(-1, 0, 3), (0, 1, 4)])
        e.run()
        assert e.read("chain") == [(0, 0), (0, 1), (0, 2)]
        assert e.read("next_step") == [(0, -1, 0), (0, 0, 1), (0, 1, 2)]
        # Souffle's truncating / and %: -7 / 3 = -2, -7 % 3 = -1
        assert e.read("mixed") == [(1, 2, -7, 5, -2, -1), (2, 1, -7, 5, 1, 2)]
        assert e.read("shifted") == [(1, 4), (2, 3)]
        # an empty relation: a clause needing it never fires, its negation always holds
        assert e.read("dead") == [] and e.read("alive") == [(-1,), (0,)]


INLINE_ARITHMETIC = parse_program("""
.decl v(x: number, y: number)
.decl out(x: number, y: number, q: number, r: number, q3: number, r3: number, lo: number, hi: number)
out(x, y, x / y, x % y, x / 3, x % 3, min(x, y), max(x, y)) :- v(x, y), y != 0.
""", "inline.dl")


def test_python_inline_arithmetic_agrees_with_its_reference():
    """The Python evaluator writes integer / and % inline where the dividend
    is not negative (and the divisor positive), and min / max of two values
    as a test (pyeval._Source.value): on every sign they agree with the
    plain helpers, pyeval._div and _mod (Soufflé's truncation), min, max."""
    from sdylog.datalog.pyeval import _div, _mod
    rows = [(x, y) for x in (-7, -6, -1, 0, 1, 6, 7) for y in (-3, -2, -1, 1, 2, 3)]
    with held_in("python"), make_engine(INLINE_ARITHMETIC, "memory") as e:
        e.load("v", rows)
        e.run()
        assert e.read("out") == sorted((x, y, _div(x, y), _mod(x, y), _div(x, 3), _mod(x, 3), min(x, y), max(x, y))
                                       for x, y in rows)


def test_lookup_on_a_selective_column_of_a_big_relation():
    # enough rows that the planner looks at column statistics: column 0 is
    # selective, column 1 is not; the answer must not depend on the index used
    rnd = random.Random(3)
    item = {(i, rnd.randrange(3), rnd.randrange(6)) for i in range(400)}
    link = {(rnd.randrange(400), rnd.randrange(400), rnd.randrange(5)) for _ in range(900)}
    expected = {(i, o, w) for (i, o, w) in link for (a, k, _) in item if a == i
                for (b, k2, _) in item if b == o and k2 == k}
    expected |= {(i, o, w) for (i, o, w) in link if any(a == i and k == 1 for a, k, _ in item)
                 and any(b == o and k == 1 and s > 2 for b, k, s in item)}
    with make_engine(PLANNER, "memory") as e:
        e.load("link", sorted(link))
        e.load("item", sorted(item))
        e.run(relations=["kind_one"])   # an index on item is built first
        e.run()
        assert set(e.read("by_two")) == expected


# Rank-ordered: first arrival per node wins; a label's distance comes from
# two clauses reading `reach` (one of them twice, a self join) and one over
# a relation with no tuples (dropped).
RACE = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl seed(x: number, label: number)
.decl blocked(x: number)
.decl reach(x: number, label: number, r: Rank)
reach(x, l, 0) :- seed(x, l).
reach(y, l, r + w) :- reach(x, l, r), edge(x, y, w).
reach(y, l, r + 100) :- reach(x, l, r), blocked(x), edge(x, y, _).
reach(y, l, r2 + 1) :- reach(x, l, r), reach(x, l2, r2), l2 = l, r2 >= r, edge(y - 1, x, _), edge(x, y, _).
reach(x, l1, r1) <= reach(x, l2, r2) :- l2 != l1, r2 <= r1.
reach(x, l, r1) <= reach(x, l, r2) :- r2 < r1.
"""


def race_reference(edges, seeds):
    """Dijkstra over (rank, node) where different labels arriving first with
    equal ranks tie: none of them keeps the node, and a later arrival may."""
    import heapq
    adj = {}
    for x, y, w in edges:
        adj.setdefault(x, []).append((y, w))
    final = {}
    heap = [(0, x, l) for x, l in seeds]
    while heap:
        r = heap[0][0]
        wave = []
        while heap and heap[0][0] == r:
            wave.append(heapq.heappop(heap))
        fresh = {}
        for _, x, l in wave:
            if x in final:
                continue
            fresh.setdefault(x, set()).add(l)
        for x, labels in fresh.items():
            if len(labels) == 1:
                (l,) = labels
                final[x] = (l, r)
                for y, w in adj.get(x, ()):
                    heapq.heappush(heap, (r + w, y, l))
    return final


@settings(max_examples=30, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 15), st.integers(0, 15), st.integers(1, 6)), max_size=40),
       st.sets(st.tuples(st.integers(0, 15), st.integers(0, 2)), min_size=1, max_size=4))
def test_rank_ordered_race_grouped_clauses(edges, seeds):
    # keep only edges whose self-join clause cannot fire (no y-1 -> x -> y
    # pattern) so the Python reference is plain first-arrival
    edges = {(x, y, w) for x, y, w in edges if (y - 1, x) not in {(a, b) for a, b, _ in edges}}
    with make_engine(parse_program(RACE), "memory") as e:
        e.load("edge", sorted(edges))
        e.load("seed", sorted(seeds))
        e.run()
        got = {x: (l, r) for x, l, r in e.read("reach")}
    ref = race_reference(edges, seeds)
    assert got == ref
    with held_in("python"), make_engine(parse_program(RACE), "memory") as e:
        e.load("edge", sorted(edges))
        e.load("seed", sorted(seeds))
        e.run()
        assert {x: (l, r) for x, l, r in e.read("reach")} == got


def _engine_freed_without_collector(load) -> bool:
    """Whether an engine that ran is freed as soon as its last reference
    goes, with the cyclic collector off: a cycle through the engine would
    keep it, and all of its tuples, until a full collection."""
    import gc
    import weakref
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        e = make_engine(PLANNER, "memory")
        load(e)
        e.run()
        assert e.read("chain")
        freed = weakref.ref(e)
        del e
        return freed() is None
    finally:
        if was_enabled:
            gc.enable()


def test_an_engine_is_freed_by_its_last_reference():
    def small(e):
        e.load("step", [(0, 0), (0, 1)])
        e.load("item", [(0, 1, 4)])
    assert _engine_freed_without_collector(small)

    def beyond_64_bits(e):   # the C tables hand every relation back to Python sets
        small(e)
        e.load("link", [(1, 2, 2 ** 70)])
    assert _engine_freed_without_collector(beyond_64_bits)


class _UnhashableName(str):
    def __hash__(self):
        raise RuntimeError("no hash")


@pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")
def test_rows_loaded_in_c_before_a_load_all_raises_are_read():
    program = parse_program(".decl a(x: symbol)\n.decl b(x: symbol)\n", "load_all.dl")
    with held_in("c"), make_engine(program, "memory") as e:
        e.load("a", [("x",)])
        assert e.read("a") == [("x",)]   # (a set made from a's C rows, to be forgotten)
        with pytest.raises(RuntimeError, match="no hash"):   # (interning b's symbol hashes it)
            e.load_all({"a": [("y",)], "b": [(_UnhashableName("z"),)]})
        assert e.read("a") == [("x",), ("y",)]


def test_merged_facts_keep_the_rows_of_every_source():
    relations = {"a": None, "b": None}
    first, second = {"a": [(1,)], "b": [], "other": [(9,)]}, {"a": [(2,)], "b": [(3,)]}
    assert merged_facts(relations, first, second) == {"a": [(1,), (2,)], "b": [(3,)]}
    assert first == {"a": [(1,)], "b": [], "other": [(9,)]}   # (sources unchanged)
    assert merged_facts(relations, first) == {"a": [(1,)]}
