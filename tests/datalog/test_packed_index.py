"""The packed indexes the C database builds on tables that do not change
while they are read (table.h index_build_packed, a fast path: ~5% of a warm
transformer_L48 propagation; direct ones on columns of ids, hashed ones)
against their plain reference (index_build_plain:
row by row, as a live index is kept): the same results on random data and
on the propagation pipeline."""
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.native_plan import native_module

native = native_module()
pytestmark = pytest.mark.skipif(native is None or not hasattr(native, "plain_indexes"),
                                reason="needs the C extension")

# Lookups on one and two columns, keys of one row and of many, symbols, a
# negation and aggregates over the relations below each stratum.
PROGRAM = parse_program("""
.decl edge(x: number, y: number, tag: symbol)
.decl hop(x: number, z: number)
.decl same_tag(x: number, y: number)
.decl path(x: number, y: number)
.decl alone(x: number, y: number)
.decl degree(x: number, n: number, top: number)
hop(x, z) :- edge(x, y, _), edge(y, z, _).
same_tag(x, z) :- edge(x, y, t), edge(y, z, t).
path(x, y) :- hop(x, y).
path(x, z) :- path(x, y), hop(y, z).
alone(x, y) :- edge(x, y, t), !same_tag(x, y), !edge(y, x, t).
degree(x, n, m) :- edge(x, _, _), n = count : { hop(x, _) }, m = max z : { path(x, z) }.
""", "packed.dl")

# (nodes 0..9 mostly: keys of a few values, direct indexes; a far one makes
# them hashed)
nodes = st.one_of(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9), st.sampled_from([-7, 10**6, 2**40]))
edges = st.lists(st.tuples(nodes, nodes, st.sampled_from(["a", "b", "c"])), max_size=60)


def evaluate(facts, plain: bool) -> dict:
    native.plain_indexes(plain)
    try:
        with make_engine(PROGRAM) as e:
            e.load("edge", facts)
            e.run()
            return {r: e.read(r) for r in PROGRAM.relations}
    finally:
        native.plain_indexes(False)


@settings(max_examples=30, deadline=None)
@given(edges)
def test_packed_and_plain_indexes_agree(facts):
    assert evaluate(facts, plain=True) == evaluate(facts, plain=False)


def test_the_pipeline_is_the_same_with_plain_indexes():
    from sdylog.passes.driver import optimize_text, parse_flags
    path = Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir"
    text, flags = path.read_text(), parse_flags(["-sdy-propagation-pipeline"])
    packed = optimize_text(text, str(path), flags)
    native.plain_indexes(True)
    try:
        plain = optimize_text(text, str(path), flags)
    finally:
        native.plain_indexes(False)
    assert plain == packed
