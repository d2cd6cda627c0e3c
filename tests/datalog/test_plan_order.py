"""The planner's order of a clause's literals (plan.py): a membership
probe of a relation of the stratum goes first; a disjunction that could
bind a variable waits for the one atom that binds it, as a test."""
import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.datalog import plan as P

HEAD = """
.decl a(x: number, y: number)
.decl b(x: number, w: number, v: number)
.decl c(w: number, v: number)
.decl p(x: number, y: number)
.decl q(x: number, y: number)
.decl out(x: number, v: number)
"""


def plan_of(text, delta=None, live=frozenset()):
    program = parse_program(HEAD + text)
    c = program.clauses[0]
    arity = 0 if delta is None else len(c.body[delta].args)
    return P.plan_clause(P.Context(size=lambda rel: None, live=live), c.body, c.head.args, 0, 0,
                         program.clause_kinds[0], delta, arity).steps


def lookups(steps):
    return [s.relation for s in steps if isinstance(s, (P.Lookup, P.Scan))]


def test_a_live_membership_probe_goes_first():
    steps = plan_of("out(x, z) :- p(x, y), a(x, z), q(x, y).", delta=0, live=frozenset({"p", "q"}))
    assert lookups(steps) == ["q", "a"]


def test_a_live_atom_that_binds_stays_last():
    steps = plan_of("out(x, z) :- p(x, y), q(x, z), a(x, y).", delta=0, live=frozenset({"p", "q"}))
    assert lookups(steps) == ["a", "q"]


def test_a_disjunction_waits_for_the_atom_that_binds_its_variable():
    steps = plan_of("out(x, v) :- a(x, y), (w = -1 ; w = y), b(x, w, v).")
    assert lookups(steps) == ["a", "b"]
    assert not any(isinstance(s, P.Branch) for s in steps)
    [lookup] = [s for s in steps if isinstance(s, P.Lookup) and s.relation == "b"]
    assert lookup.key == (0,)
    assert any(isinstance(s, P.Either) for s in steps[steps.index(lookup):])


def test_a_disjunction_binds_when_the_atom_has_no_other_key():
    # waiting would make c a scan: one lookup per option instead
    steps = plan_of("out(w, v) :- a(x, y), (w = x ; w = y), c(w, v).")
    assert any(isinstance(s, P.Branch) for s in steps)


def test_a_disjunction_read_elsewhere_binds_at_once():
    steps = plan_of("out(x, v) :- a(x, y), (w = -1 ; w = y), b(x, w, v), c(w, _).")
    assert any(isinstance(s, P.Branch) for s in steps)


@pytest.mark.parametrize("native", [True, False])
def test_the_orders_give_the_rows(native, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "1" if native else "0")
    text = ("out(x, v) :- a(x, y), (w = -1 ; w = y), b(x, w, v).\n"
            "out(x, v) :- a(x, y), (w = -1, v = 0 ; w = y, v = 1), b(x, w, _).\n")
    facts = {"a": [(1, 2), (2, 3), (3, 3)], "b": [(1, -1, 10), (1, 2, 11), (2, 4, 12), (3, 3, 13), (3, 5, 14)]}
    with make_engine(parse_program(HEAD + text, "order.dl"), "memory") as e:
        for name, rows in facts.items():
            e.load(name, rows)
        e.run()
        assert sorted(e.read("out")) == [(1, 0), (1, 1), (1, 10), (1, 11), (3, 1), (3, 13)]
