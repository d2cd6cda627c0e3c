"""A disjunction of comparisons only is one test of its clause (ast.AnyOf,
plan.Either, the C instruction ANY), not one clause per disjunct; a
disjunction that binds a variable is still split, as Soufflé does. The C
and Python evaluations and the split program agree."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdylog.datalog import make_engine, native_plan, parse_program
from sdylog.datalog import plan as P
from sdylog.datalog.printer import print_program
from sdylog.ir.diagnostics import SdylogError

HEAD = """
.type Rank <: number
.decl a(x: number, y: number, z: number)
.decl s(x: symbol, n: number)
.decl out(x: number, y: number)
.decl t(x: symbol)
.decl lab(x: number, p: Rank, q: number, z: number)
.decl best(x: number, p: Rank, q: number)
"""


def bodies(text):
    return [c.body for c in parse_program(HEAD + text).clauses]


def test_a_disjunction_of_comparisons_is_one_literal():
    [body] = bodies("out(x, y) :- a(x, y, z), (x < y ; x = y, z > 3 ; x / 2 = -3, z = 1).")
    assert [type(lit).__name__ for lit in body] == ["Atom", "AnyOf"]
    assert [len(option) for option in body[1].options] == [1, 2, 2]


def test_a_disjunction_binding_in_every_option_is_one_literal():
    [body] = bodies("out(x, z) :- a(x, _, _), (x < 0, z = 1 ; x >= 0, z = x + 1).")
    assert [type(lit).__name__ for lit in body] == ["Atom", "AnyOf"]
    # the outer disjunction binds p, the inner ones only test: one literal
    [body] = bodies("out(x, p) :- a(x, y, z), ((x < y ; x = y, z < 0), p = x ; (y < x ; y = x, z >= 0), p = y).")
    assert [type(lit).__name__ for lit in body] == ["Atom", "AnyOf"]


def test_other_disjunctions_are_split():
    # an option that does not bind what another binds
    assert len(bodies("out(x, y) :- a(x, _, _), (x = 1, y = 2 ; y = 3, x = 4).")) == 1
    assert len(bodies("out(x, z) :- a(x, _, _), (z = 1 ; w = 2, z = w).")) == 2
    # atoms or a negation in it
    assert len(bodies("out(x, y) :- a(x, y, _), (x < y ; a(y, x, _)).")) == 2
    # a binding in a disjunction nested in an option: the outer one is split, the inner one kept
    split = bodies("out(p, q) :- a(p, _, _), (p = 1, (q = 2 ; q = 3) ; p = 2, q = 0).")
    assert [[type(lit).__name__ for lit in b] for b in split] == [["Atom", "Comparison", "AnyOf"],
                                                                  ["Atom", "Comparison", "Comparison"]]


def test_a_subsumption_body_of_comparisons_is_one_test():
    text = ("lab(x, p1, q1, z1) <= lab(x, p2, q2, z2) :- p2 < p1 ; p2 = p1, q2 < q1 ; p2 = p1, q2 = q1, z2 <= z1.\n"
            "lab(x, p, q, z) :- a(x, p, q), z = 0.")
    [sub] = parse_program(HEAD + text).subsumptions
    assert [type(lit).__name__ for lit in sub.body] == ["AnyOf"]


def test_printed_and_parsed_again_it_is_the_same_program():
    text = "out(x, y) :- a(x, y, z), (x < y ; x = y, (z > 3 ; z < -3)).\nt(x) :- s(x, n), (n > 1 ; match(\"a.*\", x))."
    program = parse_program(HEAD + text)
    again = parse_program(print_program(program))
    assert [c.body for c in again.clauses] == [c.body for c in program.clauses]


def test_a_negated_disjunction_is_an_error():
    with pytest.raises(SdylogError, match="only an atom or a single constraint can be negated"):
        parse_program(HEAD + "out(x, y) :- a(x, y, _), !(x < y ; x > 3).")


def test_a_binding_disjunction_is_one_branch_and_c_runs_it():
    program = parse_program(HEAD + "out(x, w) :- a(x, y, z), (x < y, w = y ; x >= y, w = z * 2).")
    c = program.clauses[0]
    plan = P.plan_clause(P.Context(size=lambda rel: None), c.body, c.head.args, 0, 0, program.clause_kinds[0])
    [branch] = [s for s in plan.steps if isinstance(s, P.Branch)]
    assert [[type(x).__name__ for x in option] for option in branch.options] == [["Test", "Assign"]] * 2
    words = native_plan.lower(plan, native_plan.IndexSlots()).words
    assert words.count(native_plan.OP_BRANCH) == 1 and words.count(native_plan.OP_JOIN) == 2


def test_the_plan_holds_one_either_and_c_runs_it():
    program = parse_program(HEAD + "out(x, y) :- a(x, y, z), (x < y ; x = y, z + 1 > 3).")
    c = program.clauses[0]
    plan = P.plan_clause(P.Context(size=lambda rel: None), c.body, c.head.args, 0, 0, program.clause_kinds[0])
    [either] = [s for s in plan.steps if isinstance(s, P.Either)]
    assert [[t.op for t in option] for option in either.options] == [["<"], ["=", ">"]]
    words = native_plan.lower(plan, native_plan.IndexSlots()).words
    assert native_plan.OP_ANY in words and native_plan.OP_CMP not in words


def run(text, facts, native, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "1" if native else "0")
    with make_engine(parse_program(HEAD + text, "gen.dl"), "memory") as e:
        for name, rows in facts.items():
            e.load(name, rows)
        e.run()
        return {r: sorted(e.read(r)) for r in ("out", "t", "best")}


SYMBOLS = ["ab", "cd", "a", ""]
comparison = st.tuples(st.sampled_from(["x", "y", "z", "x + 1", "y * 2", "z / 2", "-1", "2"]),
                       st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
                       st.sampled_from(["x", "y", "z", "0", "1", "z % 3"])).map(" ".join)
option = st.lists(comparison, min_size=1, max_size=3).map(", ".join)
disjunction = st.lists(option, min_size=2, max_size=4)
# options that bind w (after or before their tests)
binding = st.tuples(option, st.sampled_from(["w = x", "w = y + z", "w = 2", "w = z * x"]), st.booleans()).map(
    lambda t: f"{t[1]}, {t[0]}" if t[2] else f"{t[0]}, {t[1]}")
binding_disjunction = st.lists(binding, min_size=2, max_size=4)


@settings(max_examples=40, deadline=None)
@given(disjunction, binding_disjunction, st.lists(st.tuples(*[st.integers(-3, 3)] * 3), max_size=12),
       st.lists(st.tuples(st.sampled_from(SYMBOLS), st.integers(0, 2)), max_size=4))
def test_c_python_and_the_split_program_agree(options, bindings, rows, symbols):
    with pytest.MonkeyPatch.context() as mp:
        kept = (f"out(x, y) :- a(x, y, z), ({' ; '.join(options)}).\n"
                f"out(x, w) :- a(x, y, z), ({' ; '.join(bindings)}).\n"
                "t(x) :- s(x, n), (match(\"a.*\", x) ; n > 1, !contains(\"c\", x) ; n = 2).\n"
                # rank order by p: the subsumption compares (p, q, z) column by column
                "lab(x, p, q, z) :- a(x, p, q), z = 0.\n"
                "lab(y, p, q + 1, x) :- lab(x, p, q, _), a(x, y, _), q < 3.\n"
                "lab(x, p1, q1, z1) <= lab(x, p2, q2, z2) :- p2 < p1 ; p2 = p1, q2 < q1 ; p2 = p1, q2 = q1, z2 <= z1.\n"
                "best(x, p, q) :- lab(x, p, q, _).\n")
        split = ("".join(f"out(x, y) :- a(x, y, z), {o}.\n" for o in options)
                 + "".join(f"out(x, w) :- a(x, y, z), {o}.\n" for o in bindings) + kept.split("\n", 2)[2])
        facts = {"a": rows, "s": symbols}
        want = run(split, facts, False, mp)
        assert run(kept, facts, False, mp) == want
        assert run(kept, facts, True, mp) == want


@pytest.mark.parametrize("body", ["a(x, y, z), (y < x ; y = x, z < 0)", "a(x, y, _) ; a(y, x, _)"])
def test_a_disjunction_in_an_aggregate_body_is_an_error_as_in_souffle(body, tmp_path):
    # Soufflé's parser: "disjunctions in aggregation clauses are currently not supported".
    path = tmp_path / "agg.dl"
    path.write_text(HEAD + f"out(x, n) :- a(x, _, _),\n    n = count : {{ {body} }}.\n")
    with pytest.raises(SdylogError, match=r"agg\.dl:\d+:9: error: disjunctions in aggregate bodies"):
        parse_program(path.read_text(), str(path))
