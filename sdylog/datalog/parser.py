"""Recursive-descent parser for the part of Soufflé's language sdylog uses.

Anything outside that part is an error at its file:line:col, never skipped.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import product

from sdylog.datalog.ast import (INFIX, NAMED, PREFIX_PRECEDENCE, Aggregate, AnyOf, Atom, BoolLit, Comparison,
                                Functor, Negation, NumberLit, StringLit, Var, Wildcard, nodes)
from sdylog.datalog.lexer import Loc, Token, error
from sdylog.ir.diagnostics import SdylogError

# The comparison operators, each with its negation.
_NEGATED = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_AGGREGATES = {"count", "sum", "min", "max", "mean"}
KEYWORDS = (_AGGREGATES | NAMED | set(INFIX) | {"bnot", "lnot", "match", "contains", "true", "false",
             "as", "nil", "ord", "range", "autoinc", "recursive_iteration_cnt", "choice-domain"})
# Functors of a fixed number of arguments, and of at least some.
_ARITY = {"strlen": 1, "to_number": 1, "to_string": 1, "to_float": 1, "to_unsigned": 1, "substr": 3}
_LEAST_ARGUMENTS = {"min": 2, "max": 2, "cat": 1}
_UNSUPPORTED_DIRECTIVES = {".functor", ".comp", ".init", ".override", ".lattice", ".limitsize",
                           ".number_type", ".symbol_type", ".pragma"}
# Relation qualifiers that only choose a data structure or an optimisation in
# Soufflé; they do not change what a program computes.
_REPRESENTATION_QUALIFIERS = {"btree", "brie", "inline", "no_inline", "magic", "no_magic",
                              "overridable", "btree_delete"}
_IO_QUALIFIERS = {"input", "output", "printsize"}


@dataclass
class ParsedDecl:
    names: list[tuple[str, Loc]]
    columns: list[tuple[str, str, Loc]]   # name, type name, location of the type
    qualifiers: list[str]
    loc: Loc


@dataclass
class ParsedType:
    name: str
    bases: list[tuple[str, Loc]]   # subtype of one, or union of several
    subset: bool
    loc: Loc


@dataclass
class ParsedDirective:
    kind: str
    names: list[tuple[str, Loc]]
    params: dict[str, str]
    loc: Loc


@dataclass
class ParsedRule:
    heads: list[Atom]
    bodies: list[list]   # disjunctive normal form: one list of literals per disjunct
    loc: Loc
    dominating: Atom | None = None   # subsumption `heads[0] <= dominating :- body.`


@dataclass
class ParsedProgram:
    types: list[ParsedType] = field(default_factory=list)
    decls: list[ParsedDecl] = field(default_factory=list)
    directives: list[ParsedDirective] = field(default_factory=list)
    rules: list[ParsedRule] = field(default_factory=list)


class Parser:
    def __init__(self, tokens: list[Token], eof_loc: Loc):
        self.toks = tokens + [Token("eof", "", eof_loc)]
        self.pos = 0
        self.fail_pos = 0   # token index of the last error, to report the likelier one

    # ---- token helpers ----
    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self) -> Token:
        """The token after this one."""
        return self.toks[min(self.pos + 1, len(self.toks) - 1)]

    def at(self, text: str) -> bool:
        return self.tok.text == text and self.tok.kind in ("op", "ident", "directive")

    def take(self) -> Token:
        t = self.tok
        self.pos += 1
        return t

    def fail(self, message: str, tok: Token | None = None):
        tok = tok or self.tok
        self.fail_pos = self.pos
        raise error(tok.loc, message)

    def describe(self, tok: Token) -> str:
        return "end of input" if tok.kind == "eof" else f"'{tok.text}'" if tok.kind != "string" \
            else "a string"

    def expect(self, text: str) -> Token:
        if not self.at(text):
            self.fail(f"expected '{text}', found {self.describe(self.tok)}")
        return self.take()

    def ident(self, what: str) -> Token:
        if self.tok.kind != "ident":
            self.fail(f"expected {what}, found {self.describe(self.tok)}")
        return self.take()

    def separated(self, item, separator: str = ",") -> list:
        """`item, item, ...` (one or more)."""
        out = [item()]
        while self.at(separator):
            self.take()
            out.append(item())
        return out

    def parenthesised(self, item) -> list:
        """`( item, ... )`, possibly empty."""
        self.expect("(")
        out = [] if self.at(")") else self.separated(item)
        self.expect(")")
        return out

    # ---- program ----
    def program(self) -> ParsedProgram:
        prog = ParsedProgram()
        while self.tok.kind != "eof":
            t = self.tok
            if t.kind == "directive":
                if t.text == ".decl":
                    prog.decls.append(self.decl())
                elif t.text == ".type":
                    prog.types.append(self.type_decl())
                elif t.text in (".input", ".output", ".printsize"):
                    prog.directives.append(self.io_directive())
                elif t.text == ".plan":
                    self.fail("'.plan' must follow a rule")
                elif t.text in _UNSUPPORTED_DIRECTIVES:
                    self.fail(f"'{t.text}' is not supported by sdylog's Datalog front end")
                else:
                    self.fail(f"unexpected '{t.text}'")
            elif t.kind == "ident":
                start = self.pos
                prog.rules.append(self.rule())
                own_variables_apart(self.toks[start:self.pos])
            else:
                self.fail(f"expected a declaration, a directive or a rule, found {self.describe(t)}")
        return prog

    def decl(self) -> ParsedDecl:
        start = self.take()
        names = self.separated(self.relation_name)
        cols = self.parenthesised(self.column)
        quals = []
        while self.tok.kind == "ident" and self.tok.text in _REPRESENTATION_QUALIFIERS | _IO_QUALIFIERS:
            quals.append(self.take().text)
        if self.tok.kind == "ident" and self.tok.text in ("eqrel", "choice"):
            self.fail(f"'{self.tok.text}' relations are not supported")
        return ParsedDecl(names, cols, quals, start.loc)

    def column(self) -> tuple[str, str, Loc]:
        name = self.ident("a column name")
        self.expect(":")
        ctype = self.ident("a type name")
        return name.text, ctype.text, ctype.loc

    def relation_name(self) -> tuple[str, Loc]:
        t = self.ident("a relation name")
        if self.at(".") and self.peek().kind == "ident" and self.peek().loc.col == t.loc.col + len(t.text) + 1:
            self.fail("qualified relation names (components) are not supported")
        return t.text, t.loc

    def type_decl(self) -> ParsedType:
        start = self.take()
        name = self.ident("a type name")
        if self.at("<:"):
            self.take()
            base = self.ident("a type name")
            return ParsedType(name.text, [(base.text, base.loc)], True, start.loc)
        self.expect("=")
        if self.at("["):
            self.fail("record types are not supported")
        return ParsedType(name.text, self.separated(self.union_member, "|"), False, start.loc)

    def union_member(self) -> tuple[str, Loc]:
        b = self.ident("a type name")
        if self.at("{"):
            self.fail("algebraic data types are not supported")
        return b.text, b.loc

    def io_directive(self) -> ParsedDirective:
        start = self.take()
        names = self.separated(self.relation_name)
        params = dict(self.parenthesised(self.parameter)) if self.at("(") else {}
        return ParsedDirective(start.text[1:], names, params, start.loc)

    def parameter(self) -> tuple[str, str]:
        key = self.ident("a parameter name")
        self.expect("=")
        v = self.take()
        if v.kind not in ("string", "ident", "number"):
            self.fail(f"expected a parameter value, found {self.describe(v)}", v)
        return key.text, v.text

    # ---- rules ----
    def rule(self) -> ParsedRule:
        heads = [self.atom()]
        if self.at("<="):
            return self.subsumption(heads[0])
        while self.at(","):
            self.take()
            heads.append(self.atom())
        bodies = self.rule_bodies()
        if self.at(".plan"):
            self.plan()
        return ParsedRule(heads, bodies, heads[0].loc)

    def rule_bodies(self) -> list[list]:
        """`:- body.` (its disjuncts), or just `.` for a fact: one empty body."""
        if self.at(":-"):
            self.take()
            bodies = one_test(self.disjunction())
        else:
            bodies = [[]]
        self.expect(".")
        return bodies

    def subsumption(self, dominated: Atom) -> ParsedRule:
        """`A(..) <= A(..) :- body.`: A's tuples matching the left atom are subsumed
        by those matching the right one when the body holds."""
        self.take()
        dominating = self.atom()
        if dominating.relation != dominated.relation:
            raise error(dominating.loc, f"a subsumptive rule relates tuples of one relation, not "
                        f"'{dominated.relation}' and '{dominating.relation}'")
        bodies = self.rule_bodies()
        return ParsedRule([dominated], bodies, dominated.loc, dominating)

    def plan(self):
        # An execution plan only orders joins in Soufflé; it does not change results.
        self.take()
        self.separated(self.plan_version)

    def plan_version(self):
        """`N: (i, j, ...)`"""
        self.number("a version number in '.plan'")
        self.expect(":")
        self.parenthesised(lambda: self.number("an atom position in '.plan'"))

    def number(self, what: str) -> Token:
        if self.tok.kind != "number":
            self.fail(f"expected {what}")
        return self.take()

    def disjunction(self) -> list[list]:
        return sum(self.separated(self.conjunction, ";"), [])

    def conjunction(self) -> list[list]:
        parts = self.separated(self.term)
        return [sum(combo, []) for combo in product(*parts)]

    def term(self) -> list[list]:
        """A body element as a disjunction of conjunctions."""
        if self.at("!"):
            bang = self.take()
            inner = self.term()
            if len(inner) != 1 or len(inner[0]) != 1 or isinstance(inner[0][0], AnyOf):
                self.fail("only an atom or a single constraint can be negated", bang)
            lit = inner[0][0]
            if isinstance(lit, Atom):
                return [[Negation(lit, bang.loc)]]
            if isinstance(lit, Negation):
                return [[lit.atom]]
            if isinstance(lit, Comparison) and lit.op in _NEGATED:
                return [[replace(lit, op=_NEGATED[lit.op])]]
            if isinstance(lit, Comparison):   # match, contains
                return [[replace(lit, negated=not lit.negated)]]
            return [[replace(lit, value=not lit.value)]]   # true, false
        if self.at("("):
            save = self.pos
            try:
                return [[self.constraint()]]
            except SdylogError as first:  # retried as a parenthesised body
                first_pos = self.fail_pos
                self.pos = save
                self.take()
                try:
                    inner = self.disjunction()
                    self.expect(")")
                    return one_test(inner)
                except SdylogError:
                    if first_pos > self.fail_pos:
                        raise first from None
                    raise
        t = self.tok
        if t.kind == "ident" and t.text in ("true", "false"):
            self.take()
            return [[BoolLit(t.text == "true", t.loc)]]
        if t.kind == "ident" and t.text not in KEYWORDS and self.peek().text == "(":
            return [[self.atom()]]
        return [[self.constraint()]]

    def atom(self) -> Atom:
        name, loc = self.relation_name()
        if name in KEYWORDS:
            self.fail(f"'{name}' is a keyword, not a relation name")
        return Atom(name, tuple(self.parenthesised(self.expr)), loc)

    def constraint(self) -> Comparison:
        t = self.tok
        if t.kind == "ident" and t.text in ("match", "contains") and self.peek().text == "(":
            self.take()
            self.expect("(")
            a = self.expr()
            self.expect(",")
            b = self.expr()
            self.expect(")")
            return Comparison(t.text, a, b, t.loc)
        left = self.expr()
        op = self.tok
        if op.kind != "op" or op.text not in _NEGATED:
            self.fail(f"expected a comparison operator, found {self.describe(op)}")
        self.take()
        right = self.expr()
        return Comparison(op.text, left, right, left_loc(left) or t.loc)

    # ---- expressions ----
    def expr(self, min_prec: int = 0):
        left = self.unary()
        while True:
            t = self.tok
            op = t.text if t.kind in ("op", "ident") else None
            prec = INFIX.get(op)
            if prec is None or prec < min_prec:
                return left
            if op == "bshru":
                self.fail("'bshru' is not supported")
            self.take()
            right = self.expr(prec if op == "^" else prec + 1)
            left = Functor(op, (left, right), t.loc)

    def unary(self):
        t = self.tok
        if t.kind == "op" and t.text == "-":
            self.take()
            operand = self.expr(PREFIX_PRECEDENCE)
            if isinstance(operand, NumberLit) and operand.kind != "unsigned":
                return NumberLit(-operand.value, operand.kind, t.loc)
            return Functor("neg", (operand,), t.loc)
        if t.kind == "ident" and t.text in ("bnot", "lnot"):
            self.take()
            return Functor(t.text, (self.expr(PREFIX_PRECEDENCE),), t.loc)
        return self.primary()

    def primary(self):
        t = self.take()
        if t.kind == "number":
            return NumberLit(int(t.text, 0), None, t.loc)
        if t.kind == "unsigned":
            return NumberLit(int(t.text[:-1], 0), "unsigned", t.loc)
        if t.kind == "float":
            return NumberLit(float(t.text), "float", t.loc)
        if t.kind == "string":
            return StringLit(t.text, t.loc)
        if t.kind == "op" and t.text == "_":
            return Wildcard(t.loc)
        if t.kind == "op" and t.text == "(":
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "ident":
            if t.text in _AGGREGATES:
                return self.aggregate_or_functor(t)
            if t.text in NAMED:
                return self.functor(t, self.parenthesised(self.expr))
            if t.text in ("as", "nil", "ord", "range", "autoinc", "recursive_iteration_cnt"):
                self.fail(f"'{t.text}' is not supported by sdylog's Datalog front end", t)
            if t.text in KEYWORDS:
                self.fail(f"unexpected '{t.text}'", t)
            if self.at("("):
                self.fail(f"'{t.text}' is not a functor; atoms cannot appear inside expressions", t)
            return Var(t.text, t.loc)
        if t.kind == "op" and t.text in ("$", "@", "["):
            self.fail(f"'{t.text}' (counters, user-defined functors, records) is not supported", t)
        self.fail(f"expected an expression, found {self.describe(t)}", t)

    def functor(self, name: Token, args: list) -> Functor:
        arity = _ARITY.get(name.text)
        if arity is not None and len(args) != arity:
            self.fail(f"'{name.text}' takes {arity} argument{'s' if arity > 1 else ''}", name)
        least = _LEAST_ARGUMENTS.get(name.text, 0)
        if len(args) < least:
            self.fail(f"'{name.text}' needs {'two' if least == 2 else 'one'} or more arguments", name)
        return Functor(name.text, tuple(args), name.loc)

    def aggregate_or_functor(self, t: Token):
        if t.text in ("min", "max") and self.at("("):
            save = self.pos
            args = self.parenthesised(self.expr)
            if not self.at(":"):
                return self.functor(t, args)
            self.pos = save
        target = None
        if t.text != "count":
            if self.at(":"):
                self.fail(f"'{t.text}' needs an expression to aggregate before ':'")
            target = self.expr()
        elif not self.at(":"):
            self.fail("expected ':' after 'count'")
        self.expect(":")
        if self.at("{"):
            self.take()
            bodies = self.disjunction()
            self.expect("}")
            # Soufflé's parser refuses any disjunction in an aggregate body,
            # also one of comparisons only (which sdylog keeps as one AnyOf
            # test elsewhere): the rules must stay Soufflé programs.
            if len(bodies) != 1 or any(isinstance(lit, AnyOf) for lit in bodies[0]):
                self.fail(f"disjunctions in aggregate bodies are not supported (Soufflé refuses them): "
                          f"split '{t.text}' into one aggregate per case", t)
            body = bodies[0]
        else:
            body = [self.atom()]
        return Aggregate(t.text, target, tuple(body), t.loc)


def one_test(bodies: list[list]) -> list[list]:
    """A disjunction of comparisons only (no aggregate) as one body of one
    AnyOf literal: one test in its clause, not one clause per disjunct."""
    if len(bodies) < 2 or not all(isinstance(lit, (Comparison, AnyOf)) for body in bodies for lit in body):
        return bodies
    if any(isinstance(x, Aggregate) for x in nodes(bodies)):
        return bodies
    return [[AnyOf(tuple(tuple(body) for body in bodies), bodies[0][0].loc)]]


def left_loc(e) -> Loc | None:
    """Where an expression starts (its leftmost token)."""
    while isinstance(e, Functor) and e.op in INFIX:
        e = e.args[0]
    return getattr(e, "loc", None)


def own_variables_apart(clause: list[Token]) -> None:
    """An error where a variable of a macro's own (Token.call) is also a
    variable of its clause outside that call, or of another call of it
    there: as C's preprocessor, which Soufflé runs, the expansion does not
    rename it, and the two would silently be one variable."""
    first: dict[str, Token] = {}   # name -> its first token in the clause
    for x in clause:
        if x.kind != "ident":
            continue
        seen = first.setdefault(x.text, x)
        if seen.call != x.call:
            macro = (x.call or seen.call)[0]
            raise error(x.loc, f"'{x.text}' is a variable of macro '{macro}' of its own and also a "
                        f"variable of this clause at {seen.loc} (outside that call of {macro}): they "
                        "would be one variable; rename one")


def parse_tokens(tokens: list[Token], eof_loc: Loc) -> ParsedProgram:
    return Parser(tokens, eof_loc).program()
