"""The C interpreter's faster paths against the all-Python engine: each
arithmetic operator and comparison (run without a switch on the operator,
see native/interp.h), one-column and many-column index lookups (one-column
ones have their own path), and facts converted in one pass (one-digit ints
read in place)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdylog.datalog.native_plan import _native
from test_native_db import same  # (pytest puts this directory on sys.path)

pytestmark = pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")

OPERATORS = """
.decl v(x: number, y: number)
.decl op(x: number, y: number, add: number, sub: number, mul: number, mn: number, mx: number)
.decl divmod(x: number, y: number, q: number, r: number)
.decl rel(x: number, y: number, c: number)
.decl bits(x: number, y: number, a: number, o: number, e: number)
op(x, y, x + y, x - y, x * y, min(x, y), max(x, y)) :- v(x, y).
divmod(x, y, x / y, x % y) :- v(x, y), y != 0.
rel(x, y, 1) :- v(x, y), x = y.
rel(x, y, 2) :- v(x, y), x != y.
rel(x, y, 3) :- v(x, y), x < y.
rel(x, y, 4) :- v(x, y), x <= y.
rel(x, y, 5) :- v(x, y), x > y.
rel(x, y, 6) :- v(x, y), x >= y.
bits(x, y, x band y, x bor y, x bxor y) :- v(x, y).
"""
SMALL = st.integers(-(2 ** 31), 2 ** 31)   # (one or two 30-bit digits, either sign)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(SMALL, SMALL), min_size=1, max_size=12))
def test_operators_and_comparisons_agree(rows):
    with pytest.MonkeyPatch.context() as mp:
        got, in_c = same(OPERATORS, {"v": rows + [(7, -2), (-7, 2), (0, 0), (-1, 1)]}, mp)
    assert all(in_c.values())
    assert (7, -2, -3, 1) in got["divmod"] and (-7, 2, -3, -1) in got["divmod"]   # (truncated, as Soufflé)


@pytest.mark.parametrize("rule, python_reason", [
    ("op(x, y, x + y, 0, 0, 0, 0) :- v(x, y), x > 0.", "overflow"),
    ("op(x, y, x - y, 0, 0, 0, 0) :- v(x, y), x < 0.", "overflow"),
    ("op(x, y, x * y, 0, 0, 0, 0) :- v(x, y).", "overflow"),
    ("divmod(x, y, x / y, 0) :- v(x, y).", "division"),
    ("divmod(x, y, 0, x % y) :- v(x, y).", "division"),
])
def test_an_operator_that_c_cannot_compute_hands_the_stratum_to_python(rule, python_reason, monkeypatch):
    text = OPERATORS.split("op(x, y, x + y")[0] + rule + "\n"
    big = 2 ** 62 + 5   # (big + big, -big - big, big * big: beyond 64 bits)
    facts = {"v": [(big, big), (-big, big), (5, 0)] if python_reason == "overflow" else [(5, 0), (1, 1)]}
    got, in_c = same(text, facts, monkeypatch)
    assert not all(in_c.values())   # (its stratum ran in Python: the same result or error)
    assert isinstance(got, dict) or "division by zero" in got


LOOKUPS = """
.decl e(x: number, y: number, w: number)
.decl tag(x: number, t: number)
.decl one(x: number, y: number, t: number)
.decl two(x: number, y: number, w: number)
.decl path(x: number, y: number)
one(x, y, t) :- e(x, y, _), tag(y, t).
two(x, y, w) :- e(x, y, w), e(y, x, w).
path(x, y) :- e(x, y, _).
path(x, z) :- path(x, y), e(y, z, _), tag(z, _).
"""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-4, 6), st.integers(-4, 6), st.integers(0, 2)), max_size=30),
       st.lists(st.tuples(st.integers(-4, 6), st.integers(0, 3)), max_size=8))
def test_lookups_of_one_and_many_columns_agree(edges, tags):
    with pytest.MonkeyPatch.context() as mp:
        got, in_c = same(LOOKUPS, {"e": edges, "tag": tags}, mp)
    assert all(in_c.values())


def test_facts_of_many_digits_and_signs_load_as_in_python(monkeypatch):
    values = [0, 1, -1, 2 ** 30 - 1, 2 ** 30, -(2 ** 30), 2 ** 62, -(2 ** 63), 2 ** 63 - 1, True, False]
    text = ".decl v(x: number, y: number)\n.decl w(x: number, y: number)\nw(y, x) :- v(x, y).\n"
    got, in_c = same(text, {"v": [(a, b) for a in values for b in values[:4]]}, monkeypatch)
    assert all(in_c.values())
    assert (1, 2 ** 63 - 1) in got["w"] and (0, -(2 ** 63)) in got["w"]


def test_base_tuples_go_in_once_beside_the_loaded_ones(monkeypatch):
    # (a stratum's base tuples are appended, then put in the table's set at
    # once: duplicates among them and of loaded facts go, and a recursive
    # stratum's rounds read them through its live indexes)
    text = """
.decl e(x: number, y: number)
.decl r(x: number, y: number)
.decl s(x: number, y: number)
r(x, y) :- e(x, y).
r(y, x) :- e(x, y).
r(x, z) :- r(x, y), e(y, z), z != x.
s(x, y) :- e(x, y), x < y.
s(x, y) :- e(y, x), x < y.
"""
    facts = {"e": [(i % 7, (i * 3) % 11) for i in range(60)], "r": [(1, 2), (3, 3), (20, 21)], "s": [(0, 3), (30, 31)]}
    got, in_c = same(text, facts, monkeypatch)
    assert all(in_c.values())
    assert (20, 21) in got["r"] and (30, 31) in got["s"] and len(set(got["r"])) == len(got["r"])


def test_columns_compared_with_earlier_values_their_own_and_expressions(monkeypatch):
    # (an atom's column compared with a value bound by an earlier atom, by the
    # same atom, or with an expression of variables bound later)
    text = """
.decl e(x: number, y: number, w: number)
.decl f(x: number, y: number)
.decl loop(x: number, w: number)
.decl step(x: number, y: number, w: number)
.decl back(x: number, y: number)
loop(x, w) :- e(x, x, w).
step(x, y, w) :- f(x, y), e(y, z, w), z = x + 1, w != y.
step(x, y, w) :- f(x, w), e(x, y, w + 1).
back(x, y) :- f(x, y), e(y, x, y - x), e(x, _, x * 2).
"""
    facts = {"e": [(1, 1, 5), (2, 2, 6), (1, 2, 3), (2, 3, 4), (3, 4, 2), (2, 1, 1), (1, 0, 2), (2, 9, 4)],
             "f": [(1, 2), (2, 3), (1, 3), (2, 1)]}
    got, in_c = same(text, facts, monkeypatch)
    assert all(in_c.values())
    assert got["loop"] == [(1, 5), (2, 6)]
    assert got["step"] == [(1, 2, 2), (1, 2, 6), (2, 3, 3), (2, 9, 3)]
    assert got["back"] == [(1, 2)]


SYMBOL_ORDER = """
.decl name(a: symbol)
.decl before(a: symbol, b: symbol, how: number)
.decl rank(a: symbol, r: number)
before(a, b, 1) :- name(a), name(b), a < b.
before(a, b, 2) :- name(a), name(b), a <= b.
before(a, b, 3) :- name(a), name(b), a > b.
before(a, b, 4) :- name(a), name(b), a >= b.
before(a, b, 5) :- name(a), name(b), (a < b ; a = "m").
before(a, "m", 6) :- name(a), a > "m".
rank(a, r) :- name(a), r = count : { name(b), b < a }.
"""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab\u00e9\u4e2d\U0001f600\ud800", max_size=3), max_size=8))
def test_symbol_order_is_the_strings_order(names):
    """C compares symbols by their strings (code points, as Python's str;
    a lone surrogate too), never by their ids (the order they were interned)."""
    rows = [(n,) for n in ["m", "b", "a", "ab", "", *names]]
    with pytest.MonkeyPatch.context() as mp:
        got, in_c = same(SYMBOL_ORDER, {"name": rows}, mp)
    assert all(in_c.values())
    assert ("", 0) in got["rank"]


def test_min_and_max_of_a_nan_agree_and_stay_in_python(monkeypatch):
    # C holds only 64-bit integers (native_plan: a float does not lower), so a
    # float stratum is Python's whichever the engine; a NaN (from facts) goes
    # through min/max as C++'s std::min/max: the first argument unless the
    # second is less (greater), so min(NaN, 1.5) is NaN and min(1.5, NaN) 1.5
    from test_native_db import evaluate
    text = ".decl v(x: float)\n.decl r(a: float, b: float, lo: float, hi: float)\n" \
           "r(a, b, min(a, b), max(a, b)) :- v(a), v(b).\n"
    facts = {"v": [(float("nan"),), (1.5,)]}
    runs = [evaluate(text, facts, use_native=native, monkeypatch=monkeypatch) for native in (False, True)]
    (py, _), (c, in_c) = runs
    assert in_c == {("r",): False}
    shown = [sorted(repr(t) for t in got["r"]) for got in (py, c)]
    assert shown[0] == shown[1] == sorted(["(nan, nan, nan, nan)", "(nan, 1.5, nan, nan)",
                                           "(1.5, nan, 1.5, 1.5)", "(1.5, 1.5, 1.5, 1.5)"])


def test_results_beyond_64_bits_are_exact_in_c_and_python_alike(monkeypatch):
    # (C's __builtin_*_overflow hands the stratum to Python, whose integers
    # do not overflow: the exact value, where Soufflé's 64-bit number wraps;
    # the pipeline relies on it, e.g. a tensor of 2^64 elements, see
    # tests/commands/test_relations.py)
    text = ".decl n(x: number)\n.decl d(a: number, b: number, r: number)\n" \
           "d(a, b, a + b) :- n(a), n(b), b = 1.\nd(a, b, a / b) :- n(a), n(b), b = -1.\n"
    got, in_c = same(text, {"n": [(2 ** 63 - 1,), (1,), (-2 ** 63,), (-1,)]}, monkeypatch)
    assert not all(in_c.values())
    assert (2 ** 63 - 1, 1, 2 ** 63) in got["d"] and (-2 ** 63, -1, 2 ** 63) in got["d"]
