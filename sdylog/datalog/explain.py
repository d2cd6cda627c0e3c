"""Derivation trees from provenance: every derived tuple records the rule
that first produced it and the height (evaluation step) it appeared at; its
body tuples are found again top-down among tuples of smaller height."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sdylog.datalog.ast import Atom, Comparison, NumberLit, StringLit, Var
from sdylog.datalog.lexer import error
from sdylog.datalog.printer import literal, quote
from sdylog.datalog.sql import ClauseCompiler, ident


@dataclass
class Derivation:
    relation: str
    values: tuple
    how: str                 # 'input', 'fact' or 'rule'
    rule: str = ""           # file:line of the rule, for 'rule' and 'fact'
    rule_text: str = ""
    premises: list = field(default_factory=list)   # Derivation or str (negations, constraints)
    repeated: bool = False   # shown in full elsewhere in the tree

    @property
    def text(self) -> str:
        return f"{self.relation}({', '.join(_show(v) for v in self.values)})"

    def format(self) -> str:
        lines: list[str] = []
        self._format(lines, "", "", True)
        return "\n".join(lines) + "\n"

    def _format(self, lines, first, rest, root):
        note = {"input": "input", "fact": f"fact {self.rule}", "rule": f"rule {self.rule}"}[self.how]
        if self.repeated:
            note += ", derived above"
        lines.append(f"{first}{self.text}    [{note}]")
        kids = self.premises if not self.repeated else []
        for i, k in enumerate(kids):
            last = i == len(kids) - 1
            a, b = ("└── ", "    ") if last else ("├── ", "│   ")
            if isinstance(k, Derivation):
                k._format(lines, rest + a, rest + b, False)
            else:
                lines.append(f"{rest}{a}{k}")


def _show(v) -> str:
    return quote(v) if isinstance(v, str) else str(v)


def explain(engine, relation: str, values: tuple, max_depth: int = 100) -> Derivation:
    if not engine.provenance:
        raise error(None, "explain needs an engine made with provenance=True")
    values = tuple(values)
    if not engine.contains(relation, values):
        raise error(None, f"{relation}({', '.join(_show(v) for v in values)}) is not in the database")
    return _explain(engine, relation, values, max_depth, set())


def _lookup(engine, relation, values):
    decl = engine.decl(relation)
    conds = " AND ".join(f"c{i} = ?" for i in range(decl.arity)) or "TRUE"
    return engine.con.execute(f"SELECT _rule, _height FROM {engine.table(relation)} WHERE {conds}",
                              list(values)).fetchone()


def _explain(engine, relation, values, depth, seen) -> Derivation:
    rule_id, height = _lookup(engine, relation, values)
    if rule_id < 0:
        return Derivation(relation, values, "input")
    program, ci = engine.rules[rule_id]
    clause = program.clauses[ci]
    where = f"{clause.loc.file}:{clause.loc.line}"
    key = (relation, values)
    if not clause.body:
        return Derivation(relation, values, "fact", where)
    node = Derivation(relation, values, "rule", where, _clause_text(clause))
    if key in seen or depth <= 0:
        node.repeated = True
        return node
    seen.add(key)
    premises = _premises(engine, program, ci, values, height)
    for item in premises:
        if isinstance(item, tuple):
            node.premises.append(_explain(engine, item[0], item[1], depth - 1, seen))
        else:
            node.premises.append(item)
    return node


def _premises(engine, program, ci, values, height):
    clause = program.clauses[ci]
    kinds = program.clause_kinds[ci]
    pins = [Comparison("=", arg, _literal(v), clause.loc) for arg, v in zip(clause.head.args, values)]
    body = list(clause.body) + pins
    atoms: list[tuple[Atom, str]] = []

    def lower(position, atom, alias):
        atoms.append((atom, alias))
        return [f"{alias}._height < {height}"]

    comp = ClauseCompiler(kinds, engine.table, extra_atom_conds=lower)
    comp.items = body
    scope = comp.body(body, {}, top=True)
    names = sorted(n for n in kinds if n in scope.env)
    outs = [f"{alias}.c{j} AS {ident(f'a{k}_{j}')}" for k, (atom, alias) in enumerate(atoms)
            for j in range(len(atom.args))]
    outs += [f"{scope.env[n]} AS {ident('v_' + n)}" for n in names]
    sql = f"SELECT {', '.join(outs) or 'TRUE'}"
    if scope.froms:
        sql += " FROM " + ", ".join(scope.froms)
    if scope.conds:
        sql += " WHERE " + " AND ".join(scope.conds)
    row = engine.con.execute(sql + " LIMIT 1").fetchone()
    if row is None:
        raise error(clause.loc, "internal error: no derivation found for a recorded tuple")
    cols = dict(zip([o.rsplit(" AS ", 1)[1].strip('"') for o in outs], row))
    env = {n: cols[f"v_{n}"] for n in names}
    out = []
    k = 0
    for lit in clause.body:
        if isinstance(lit, Atom):
            out.append((lit.relation, tuple(cols[f"a{k}_{j}"] for j in range(len(lit.args)))))
            k += 1
        else:
            out.append(_substitute(literal(lit), env))
    return out


def _literal(v):
    return StringLit(v, None) if isinstance(v, str) else NumberLit(v, "float" if isinstance(v, float) else None, None)


def _clause_text(clause) -> str:
    return f"{literal(clause.head)} :- {', '.join(literal(l) for l in clause.body)}."


def _substitute(text: str, env: dict) -> str:
    def rep(m):
        name = m.group(0)
        return _show(env[name]) if name in env else name
    # variables outside string literals
    parts = re.split(r'("(?:\\.|[^"\\])*")', text)
    return "".join(p if i % 2 else re.sub(r"[?A-Za-z_][?A-Za-z0-9_]*", rep, p) for i, p in enumerate(parts))
