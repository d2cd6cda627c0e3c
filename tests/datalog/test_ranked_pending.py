"""The pending tuples of the C rank-ordered evaluation (native/ranked.c):
many ranks pending at once (its rank table grows, and loses each rank whose
wave starts while others that collide with it stay), buffers of run waves
reused for later ranks of other sizes, waves of several tuples with ties
and tuples of the current rank: the same relations as the Python path,
also for a later stratum that reads the result (the database's tables,
filled once the memory of the waves is freed)."""
import random

import pytest

from sdylog.datalog.native_plan import _native
from test_native import evaluate  # (pytest puts this directory on sys.path)

pytestmark = pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")

# two relations of different arities in one stratum: records of two sizes
# in one wave's buffer; labels of equal rank at a node tie (they all go);
# `late`, a plain stratum, reads the result
PROGRAM = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl seed(x: number, l: number, r: number)
.decl lab(x: number, l: number, r: Rank)
.decl hit(x: number, r: Rank)
lab(x, l, r) :- seed(x, l, r).
lab(y, l, r + w) :- lab(x, l, r), edge(x, y, w).
hit(x, r) :- lab(x, _, r).
lab(y, 0, r + w) :- hit(x, r), edge(x, y, w), y % 5 = 0.
lab(x, l, r1) <= lab(x, l, r2) :- r2 < r1.
lab(x, l1, r1) <= lab(x, l2, r2) :- l1 != l2, r2 <= r1.
hit(x, r1) <= hit(x, r2) :- r2 < r1.
.decl late(x: number, l: number)
late(x, l) :- lab(x, l, r), edge(x, y, _), hit(y, r2), r > r2.
"""


@pytest.mark.parametrize("seed, spacing", [(0, 1), (1, 1 << 18), (2, 1 << 38), (3, 7)])
def test_many_pending_ranks_give_the_python_relations(seed, spacing):
    rng = random.Random(seed)
    nodes = 400
    # ~700 seeds of distinct and repeated ranks (over 256 pending at once),
    # weights 0 (tuples of the current rank) to a few spacings
    seeds = {(rng.randrange(nodes), rng.randrange(3), rng.randrange(500) * spacing) for _ in range(700)}
    edges = {(rng.randrange(nodes), rng.randrange(nodes), rng.randrange(4) * spacing) for _ in range(1200)}
    facts = {"seed": sorted(seeds), "edge": sorted(edges)}
    c, runs = evaluate(PROGRAM, facts, use_native=True)
    assert runs == (1, 0)   # (evaluated in C, not handed back: test_native.Counting)
    py, _ = evaluate(PROGRAM, facts, use_native=False)
    assert c == py
    assert len(c["lab"]) > 300 and len(c["hit"]) > 200 and c["late"]
