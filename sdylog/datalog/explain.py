"""Derivation trees from provenance: every derived tuple records the rule
that first produced it and the height (evaluation step) it appeared at; its
body tuples are found again top-down among tuples of smaller height, by the
clause compiled to Python with the head tuple as its first atom (so lookups
go through indexes on the bound columns)."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from sdylog.datalog.ast import Atom, Var, Wildcard, variables
from sdylog.datalog.lexer import error
from sdylog.datalog import printer
from sdylog.datalog.pyeval import Namespace, compile_clause


@dataclass
class Derivation:
    relation: str
    values: tuple
    how: str                 # 'input', 'fact', 'rule' (or 'pending': premises not looked up yet)
    rule: str = ""           # file:line of the rule, for 'rule' and 'fact'
    rule_text: str = ""
    premises: list = field(default_factory=list)   # Derivation or str (negations, constraints)
    repeated: bool = False   # shown in full elsewhere in the tree
    cut: bool = False        # not expanded: the depth limit

    def format(self) -> str:
        lines: list[str] = []
        self._format(lines, "", "")
        return "\n".join(lines) + "\n"

    def _format(self, lines, first, rest):
        note = {"input": "input", "fact": f"fact {self.rule}", "rule": f"rule {self.rule}"}[self.how]
        if self.repeated:
            note += ", derived above"
        elif self.cut:
            note += ", not expanded"
        lines.append(f"{first}{_tuple_text(self.relation, self.values)}    [{note}]")
        kids = self.premises if not (self.repeated or self.cut) else []
        for i, k in enumerate(kids):
            last = i == len(kids) - 1
            a, b = ("└── ", "    ") if last else ("├── ", "│   ")
            if isinstance(k, Derivation):
                k._format(lines, rest + a, rest + b)
            else:
                lines.append(f"{rest}{a}{k}")


def _show(v) -> str:
    return printer.quote(v) if isinstance(v, str) else str(v)


def _tuple_text(relation: str, values) -> str:
    return f"{relation}({', '.join(_show(v) for v in values)})"


def explain(engine, relation: str, values: tuple, max_depth: int = 100, follow=()) -> Derivation:
    """The derivation tree of a tuple, `max_depth` levels deep; tuples of the
    relations in `follow` are expanded whatever the depth (a chain of steps)."""
    finder = premise_finder(engine)
    values = tuple(values)
    if not engine.contains(relation, values):
        raise error(None, f"{_tuple_text(relation, values)} is not in the database")
    return _explain(finder, relation, values, max_depth, set(), frozenset(follow))


def derive(finder, relation: str, values: tuple, premises: bool = True) -> Derivation:
    """One level: the tuple, its rule and its premises (themselves not expanded)."""
    values = tuple(values)
    rule_id, height = finder.origin(relation, values)
    if rule_id < 0:
        return Derivation(relation, values, "input")
    program, ci = finder.engine.rules[rule_id]
    clause = program.clauses[ci]
    where = f"{clause.loc.file}:{clause.loc.line}"
    if not clause.body:
        return Derivation(relation, values, "fact", where)
    node = Derivation(relation, values, "rule", where, printer.clause(clause))
    if premises:
        node.premises = finder.premises(rule_id, values, height)
    return node


def premise_finder(engine) -> "_Premises":
    """What finds premises in the engine (made with provenance)."""
    if not getattr(engine, "provenance", False):
        raise error(None, "explain needs an engine made with provenance=True")
    return _Premises(engine)


def _explain(finder, relation, values, depth, seen, follow) -> Derivation:
    key = (relation, values)
    stop = key in seen or depth <= 0
    node = derive(finder, relation, values, premises=not stop)
    if node.how != "rule":
        return node
    if stop:
        node.repeated, node.cut = key in seen, key not in seen
        return node
    seen.add(key)
    node.premises = [_explain(finder, p.relation, p.values, depth if p.relation in follow else depth - 1, seen, follow)
                     if isinstance(p, Derivation) else p for p in node.premises]
    return node


class _Found(Exception):
    """The first derivation found: (body tuples, variable values)."""


class _Premises:
    """Premises found in the engine: the clause compiled to Python
    with a first atom binding the head's arguments, whose solutions list the
    body atoms' tuples and the variables; the first solution whose tuples
    are all older than the head is the derivation."""

    HEAD = "__head"

    def __init__(self, engine):
        self.engine = engine
        self.compiled: dict[int, tuple] = {}

    def origin(self, relation, values):
        info = self.engine._prov.get(relation, {}).get(tuple(values))
        if info is None:
            raise error(None, f"{_tuple_text(relation, values)} has no recorded derivation")
        return info

    def _compile(self, rule_id):
        got = self.compiled.get(rule_id)
        if got is not None:
            return got
        program, ci = self.engine.rules[rule_id]
        clause = program.clauses[ci]
        fresh = itertools.count()

        def named(atom):
            return Atom(atom.relation, tuple(Var(f"_w{next(fresh)}", a.loc) if isinstance(a, Wildcard) else a
                                             for a in atom.args), atom.loc)
        body = [named(l) if isinstance(l, Atom) else l for l in clause.body]
        names = sorted({v.name for v in variables(clause.body, into_aggregates=False)})
        atoms = [l for l in body if isinstance(l, Atom)]
        out = [Var(n, clause.loc) for n in names] + [a for atom in atoms for a in atom.args]
        head = Atom(self.HEAD, clause.head.args, clause.loc)
        ns = Namespace()
        fn = compile_clause(ns, [head] + body, out, 0, rule_id, kinds=program.clause_kinds[ci])
        self.engine._bind(ns)
        got = self.compiled[rule_id] = (fn, names, [(a.relation, len(a.args)) for a in atoms])
        return got

    def premises(self, rule_id, values, height):
        fn, names, shapes = self._compile(rule_id)
        prov = self.engine._prov
        program, ci = self.engine.rules[rule_id]

        def emit(_ri, tup, _rule):
            rows, k = [], len(names)
            for rel, n in shapes:
                row = tup[k:k + n]
                k += n
                info = prov.get(rel, {}).get(row)
                if info is None or info[1] >= height:
                    return
                rows.append(row)
            raise _Found(rows, dict(zip(names, tup)))

        try:
            fn([tuple(values)], emit)
        except _Found as found:
            return _items(program.clauses[ci], *found.args)
        raise error(program.clauses[ci].loc, "internal error: no derivation found for a recorded tuple")


def _items(clause, atom_rows, env) -> list:
    """The clause's body as premises: a pending Derivation for each atom, text for the rest."""
    out = []
    rows = iter(atom_rows)
    for lit in clause.body:
        if isinstance(lit, Atom):
            out.append(Derivation(lit.relation, tuple(next(rows)), "pending"))
        else:
            out.append(_substitute(printer.literal(lit), env))
    return out


def _substitute(text: str, env: dict) -> str:
    def rep(m):
        name = m.group(0)
        return _show(env[name]) if name in env else name
    # variables outside string literals
    parts = re.split(r'("(?:\\.|[^"\\])*")', text)
    return "".join(p if i % 2 else re.sub(r"[?A-Za-z_][?A-Za-z0-9_]*", rep, p) for i, p in enumerate(parts))
