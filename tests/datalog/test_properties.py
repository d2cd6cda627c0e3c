"""Property tests against Python references: closure (linear, non-linear,
mutually recursive), negation and aggregates on random graphs."""
from collections import Counter

from hypothesis import given, settings, strategies as st

from sdylog.datalog import make_engine, parse_program

from conftest import held_in

PROGRAM = parse_program("""
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl path2(x: number, y: number)
.decl odd(x: number, y: number)
.decl even(x: number, y: number)
.decl lonely(x: number)
.decl fanout(x: number, n: number, top: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
path2(x, y) :- edge(x, y).
path2(x, z) :- path2(x, y), path2(y, z).
odd(x, y) :- edge(x, y).
odd(x, z) :- even(x, y), edge(y, z).
even(x, z) :- odd(x, y), edge(y, z).
lonely(x) :- edge(x, _), !path(x, x), !edge(_, x).
fanout(x, n, t) :- edge(x, _), n = count : { path(x, _) }, t = max y : { path(x, y) }.
""", "props.dl")

edges = st.sets(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30)


def closure(e):
    out = set(e)
    while True:
        new = {(x, z) for (x, y) in out for (y2, z) in e if y == y2} - out
        if not new:
            return out
        out |= new


def parity(e):
    odd, even = set(e), set()
    while True:
        ne = {(x, z) for (x, y) in odd for (a, z) in e if a == y} - even
        no = {(x, z) for (x, y) in even for (a, z) in e if a == y} - odd
        if not ne and not no:
            return odd, even
        even |= ne
        odd |= no


@settings(max_examples=40, deadline=None)
@given(edges, st.sampled_from(["c", "python", "provenance"]))
def test_against_python_reference(e, mode):
    provenance = mode == "provenance"
    with held_in(mode), make_engine(PROGRAM, "memory", provenance=provenance) as eng:
        eng.load("edge", sorted(e))
        eng.run()
        path = closure(e)
        assert set(eng.read("path")) == path
        assert set(eng.read("path2")) == path
        odd, even = parity(e)
        assert set(eng.read("odd")) == odd and set(eng.read("even")) == even
        targets = {y for _, y in e}
        assert set(eng.read("lonely")) == {(x,) for x, _ in e if (x, x) not in path and x not in targets}
        reach = Counter(x for x, _ in path)
        assert set(eng.read("fanout")) == {(x, reach[x], max(y for a, y in path if a == x)) for x, _ in e}
        if provenance and path:
            x, y = max(path)
            tree = eng.explain("path", (x, y))
            assert _well_founded(tree, e)


def _well_founded(node, e):
    """Every premise of a derivation is an edge, or a path explained in turn."""
    if node.relation == "edge":
        return node.values in e and node.how == "input"
    kids = [k for k in node.premises if not isinstance(k, str)]
    return node.how == "rule" and all(_well_founded(k, e) for k in kids)
