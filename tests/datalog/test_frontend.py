"""The front end: what it accepts, and file:line:col errors for what it does not."""
import pytest

from sdylog.datalog import load_program, parse_program
from sdylog.datalog.printer import literal, print_program
from sdylog.ir.diagnostics import SdylogError

SCHEMA = ".decl e(x: number, y: number)\n.decl p(x: number, y: number)\n"


def error_of(text, filename="t.dl"):
    with pytest.raises(SdylogError) as info:
        parse_program(text, filename)
    return str(info.value)


@pytest.mark.parametrize("text, expected", [
    (SCHEMA + "p(x, y) :- e(x, y)", "t.dl:3:19: error: expected '.', found end of input"),
    (SCHEMA + "p(x, y) :- e(x, y), q(y).", "t.dl:3:21: error: relation 'q' is not declared"),
    (SCHEMA + "p(x, y) :- e(x).", "t.dl:3:12: error: 'e' has 2 columns, used here with 1"),
    (SCHEMA + "p(x, z) :- e(x, y).", "t.dl:3:6: error: variable 'z' is ungrounded in the head of a rule"),
    (SCHEMA + "p(x, y) :- e(x, y), !e(y, z).", "t.dl:3:27: error: variable 'z' is ungrounded in the negation of 'e'"),
    (SCHEMA + "p(x, y) :- e(x, y), z > 1.", "t.dl:3:21: error: variable 'z' is ungrounded in a constraint"),
    (SCHEMA + "p(x, _) :- e(x, _).", "t.dl:3:6: error: '_' cannot be used in the head of a rule"),
    (SCHEMA + ".decl s(a: symbol)\np(x, y) :- e(x, y), s(x).", "variable 'x' is used as symbol here but as number"),
    (SCHEMA + 'p(x, y) :- e(x, y), x = "a".', "t.dl:3:21: error: cannot compare number with symbol"),
    (SCHEMA + "p(x, y) :- e(x, y), y = cat(x, x).", "an argument of 'cat' is symbol, given number"),
    (".decl a(x: Foo)", "t.dl:1:12: error: unknown type 'Foo'"),
    (".decl a(x: number)\n.decl a(x: number)", "t.dl:2:7: error: relation 'a' is declared twice (first at t.dl:1:7)"),
    (SCHEMA + ".comp C { }", "t.dl:3:1: error: '.comp' is not supported by sdylog's Datalog front end"),
    (SCHEMA + "p(x, y) :- e(x, y), y = @f(x).", "t.dl:3:25: error: '@' (counters, user-defined functors, records) is not supported"),
    (SCHEMA + "p(x, y) :- e(x, y), y = ord(x).", "t.dl:3:25: error: 'ord' is not supported"),
    (".decl a(x: number) eqrel", "t.dl:1:20: error: 'eqrel' relations are not supported"),
    (".type T = [a: number]", "t.dl:1:11: error: record types are not supported"),
    (SCHEMA + ".input e(IO=sqlite)", "t.dl:3:1: error: '.input' parameter IO=sqlite is not supported"),
    (SCHEMA + "p(x, y) :- e(x, y) # 1.", "t.dl:3:20: error: unexpected character '#'"),
    ('.decl s(a: symbol)\ns("abc).', "t.dl:2:3: error: unterminated string"),
    ("/* open", "t.dl:1:1: error: unterminated comment"),
    ("#include \"nowhere.dl\"", "t.dl:1:1: error: cannot find included file 'nowhere.dl'"),
    ("#define F(x, x) x", "t.dl:1:1: error: #define F: parameters are distinct names"),
    ("#define F(a) a\n.decl e(x: number)\ne(F(1, 2)).", "t.dl:3:3: error: macro 'F' needs 1 argument, given 2"),
    ("#define F(a) a\n.decl e(x: number)\ne(F(1.", "t.dl:3:4: error: a macro call without its ')'"),
    ("#if 1\n#endif", "t.dl:1:1: error: unsupported preprocessor directive '#if'"),
    (SCHEMA + "p(x, y) :- e(x, y).\np(x, 1) <= p(x, \"s\") :- true.",
     "t.dl:4:17: error: column 'y' of 'p' is number, given symbol"),
    (SCHEMA + ".input e(IO=file,)", "t.dl:3:18: error: expected a parameter name, found ')'"),
])
def test_errors_have_locations(text, expected):
    assert expected in error_of(text)


def test_function_like_macros_expand_with_their_arguments():
    text = ("#define LESS(a, b) \\\n    (a < b)\n#define BOTH(a, b, c) LESS(a, b), LESS(b, c)\n"
            + SCHEMA + "p(x, z) :- e(x, y), e(y, z), BOTH(x, y, (z + 1)).\n")
    p = parse_program(text)
    assert [literal(lit) for lit in p.clauses[0].body[2:]] == ["x < y", "y < z + 1"]
    # (a directive continued on the next line: the lines after it keep their numbers)
    assert error_of(text + "p(x, y) :- e(x, y), q(x).").startswith("t.dl:7:21: error: relation 'q'")


def test_a_macro_call_expands_with_the_definitions_before_it():
    # (as C's preprocessor: not those of the end of the file)
    program = parse_program(".decl a(x: number)\n#define F(x) x + 1\na(F(2)).\n#undef F\n"
                            "#define F(x) x * 3\na(F(2)).\n#define X F(4)\na(X).\n")
    assert print_program(program).splitlines()[1:] == ["a(2 + 1).", "a(2 * 3).", "a(4 * 3)."]
    assert "'F' is not a functor" in error_of(".decl a(x: number)\na(F(2)).\n#define F(x) x + 1\n")


# A macro binding a variable of its own (y): the expansion does not rename it
# (C's preprocessor, which Soufflé runs, does not either).
STEP = "#define STEP(a, b) e(a, y), e(y, b)\n" + SCHEMA


def test_a_macros_own_variable_may_not_meet_the_clauses():
    program = parse_program(STEP + "p(x, z) :- STEP(x, z).\np(x, y) :- e(x, y), !e(y, x).\n"
                            "p(x, z) :- STEP(x, u), e(u, z).\n")
    assert literal(program.clauses[0].body[0]) == "e(x, y)"
    # (in two calls in one clause, or also a variable of the clause, they would be one variable)
    own = "'y' is a variable of macro 'STEP' of its own and also a variable of this clause at t.dl:4:"
    assert error_of(STEP + "p(x, z) :- STEP(x, z), STEP(z, x).") == (
        f"t.dl:4:24: error: {own}12 (outside that call of STEP): they would be one variable; rename one")
    assert error_of(STEP + "p(x, y) :- STEP(x, y).").startswith(f"t.dl:4:12: error: {own}6 ")
    assert error_of(STEP + "p(x, z) :- e(x, y), STEP(y, z).").startswith(f"t.dl:4:21: error: {own}17 ")


def test_subsumptive_rule_binds_through_its_conditions():
    # (checked as the clause `p(x, y1) :- p(x, y1), p(x, y2), d = y2 + 1, y1 < d.`)
    program = parse_program(SCHEMA + "p(x, y) :- e(x, y).\np(x, y1) <= p(x, y2) :- d = y2 + 1, y1 < d.")
    assert program.subsumption_kinds == [{"x": "number", "y1": "number", "y2": "number", "d": "number"}]


def test_negation_through_recursion_names_the_rule():
    msg = error_of(".decl a(x: number)\n.decl b(x: number)\na(1).\n"
                   "b(x) :- a(x), !a(x).\na(x) :- b(x), !b(x).\n")
    assert msg == ("t.dl:4:16: error: cannot stratify: the rule for 'b' at t.dl:4 negates 'a', which "
                   "depends on 'b' (a cycle through negation)")


def test_aggregation_through_recursion_names_the_rule():
    msg = error_of(".decl a(x: number)\na(1).\na(n + 1) :- a(x), n = count : { a(_) }, n < 5.\n")
    assert "t.dl:3:33: error: cannot stratify: the rule for 'a' at t.dl:3 aggregates over 'a'" in msg


def test_strata_order_dependencies_first():
    p = parse_program(SCHEMA + ".decl q(x: number)\nq(x) :- p(x, _), !e(x, x).\n"
                      "p(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n")
    assert [s.relations for s in p.strata] == [("p",), ("q",)]
    assert [s.recursive for s in p.strata] == [True, False]


def test_comments_disjunction_and_multiple_heads_become_clauses():
    p = parse_program(SCHEMA + "// line\n/* block\n comment */ p(x, y), p(y, x) :- e(x, y) ; e(y, x).\n")
    assert len(p.clauses) == 4
    assert {c.loc.line for c in p.clauses} == {5}


def test_printer_round_trips():
    text = (".type Id <: number\n.type U = Id | number\n.decl e(x: Id, y: U)\n.decl s(a: symbol, n: float)\n"
            ".input e\n.output s(delimiter=\",\")\n"
            's(cat("a\\t", to_string(x)), to_float(-x * (y + 1) ^ 2) / 2.5) :- e(x, y), !e(y, x), x != y.\n'
            "s(\"n\", 1.0) :- n = count : { e(_, _) }, m = min x : e(x, _), n > m ; e(1, 2).\n")
    p = parse_program(text)
    printed = print_program(p)
    again = parse_program(printed)
    assert print_program(again) == printed
    assert [(c.head, c.body) for c in again.clauses] == [(c.head, c.body) for c in p.clauses]


def test_include_paths_and_guards(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "schema.dl").write_text(".once\n.decl e(x: number)\n")
    (tmp_path / "main.dl").write_text('#include "schema.dl"\n.include "schema.dl"\ne(1).\n.output e\n')
    p = load_program(str(tmp_path / "main.dl"), include_dirs=[str(tmp_path / "inc")])
    assert list(p.relations) == ["e"] and len(p.files) == 2


def test_error_inside_an_included_file_names_that_file(tmp_path):
    (tmp_path / "bad.dl").write_text(".decl e(x: number)\ne(1, 2).\n")
    (tmp_path / "main.dl").write_text('#include "bad.dl"\n')
    with pytest.raises(SdylogError, match=r"bad\.dl:2:1: error: 'e' has 1 column, used here with 2"):
        load_program(str(tmp_path / "main.dl"))


def test_numbers_types_and_qualifiers():
    p = parse_program(".type T <: symbol\n.decl a(x: number, u: unsigned, f: float, t: T) btree\n"
                      'a(0x1f, 3u, 2.5, "s").\na(-0b101, 0u, -1.5, "t").\n')
    heads = [tuple(getattr(a, "value") for a in c.head.args) for c in p.clauses]
    assert heads == [(31, 3, 2.5, "s"), (-5, 0, -1.5, "t")]
    assert p.relations["a"].kinds == ("number", "unsigned", "float", "symbol")
