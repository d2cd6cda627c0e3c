"""A plan loaded in C remembers how many rows its relations' tables held
after its last run, and how many keys its live indexes (db.h: Plan.rows_seen),
and its next run makes room for as many at once. The room is only room: runs
of one program on facts of other sizes in turn (more rows than the last run,
fewer, none) give the relations the Python path gives."""
import random

import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog.native_plan import _native

pytestmark = pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")

PROGRAM = """
.type Rank <: number
.decl edge(x: number, y: number, w: number)
.decl source(x: number)
.decl path(x: number, y: number)
.decl hop(x: number, y: number)
.decl dist(x: number, d: Rank)
hop(x, y) :- edge(x, y, _), x != y.
path(x, y) :- hop(x, y).
path(x, z) :- path(x, y), hop(y, z).
dist(x, 0) :- source(x).
dist(y, d + w) :- dist(x, d), edge(x, y, w).
dist(x, d1) <= dist(x, d2) :- d2 < d1.
"""


def relations(program, edges, use_native, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "1" if use_native else "0")
    with make_engine(program, "memory") as e:
        assert (e._db is not None) == use_native
        e.load("edge", sorted(edges))
        e.load("source", [(0,), (3,)])
        e.run()
        return {r: e.read(r) for r in ("hop", "path", "dist")}


def test_runs_on_more_then_fewer_rows_give_the_python_relations(monkeypatch):
    program = parse_program(PROGRAM)   # (one program: its plans, and what they saw, kept across runs)
    rnd = random.Random(7)
    for n in (120, 40, 0, 200, 200, 15, 120):
        edges = {(rnd.randrange(40), rnd.randrange(40), rnd.randrange(1, 9)) for _ in range(n)}
        python = relations(parse_program(PROGRAM), edges, False, monkeypatch)
        assert relations(program, edges, True, monkeypatch) == python
