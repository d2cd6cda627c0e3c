"""One clause as a DuckDB SELECT.

Relation tables have columns c0..c{n-1} (a nullary relation has one BOOLEAN
column `u`). Numbers, unsigned numbers and floats are BIGINT, BIGINT and
DOUBLE; symbols are VARCHAR. A clause compiles to
`SELECT <head exprs> AS c0.. FROM <positive atoms>, LATERAL (<aggregates>)
WHERE <joins, constants, constraints, NOT EXISTS (<negations>)>`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from sdylog.datalog.ast import (FLOAT, SYMBOL, UNSIGNED, Aggregate, Atom, BoolLit, Comparison, Functor, Negation,
                                NumberLit, StringLit, Var)

SQL_TYPE = {"number": "BIGINT", "unsigned": "BIGINT", "float": "DOUBLE", "symbol": "VARCHAR"}
UNIT_COLUMN = "u"   # the one column of a nullary relation's table


def columns(arity: int) -> list[str]:
    return [f"c{i}" for i in range(arity)] if arity else [UNIT_COLUMN]


def column_list(arity: int, alias: str | None = None) -> str:
    return ", ".join(f"{alias}.{c}" if alias else c for c in columns(arity))


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal_sql(value, kind: str | None) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if kind == FLOAT or isinstance(value, float):
        return f"CAST({float(value)!r} AS DOUBLE)"
    return f"CAST({int(value)} AS BIGINT)"


def expr_kind(e, kinds: dict[str, str]) -> str | None:
    if isinstance(e, Var):
        return kinds.get(e.name)
    if isinstance(e, NumberLit):
        return e.kind
    if isinstance(e, StringLit):
        return SYMBOL
    if isinstance(e, Aggregate):
        if e.op == "count":
            return "number"
        if e.op == "mean":
            return FLOAT
        return expr_kind(e.target, kinds) or "number"
    if isinstance(e, Functor):
        fixed = {"cat": SYMBOL, "substr": SYMBOL, "to_string": SYMBOL, "strlen": "number",
                 "to_number": "number", "to_float": FLOAT, "to_unsigned": UNSIGNED}
        if e.op in fixed:
            return fixed[e.op]
        for a in e.args:
            k = expr_kind(a, kinds)
            if k is not None:
                return k
        return None
    return None


_COMPARE = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*", "%": "%", "band": "&", "bor": "|", "bshl": "<<", "bshr": ">>"}


@dataclass
class _Scope:
    env: dict[str, str]
    froms: list[str] = field(default_factory=list)
    conds: list[str] = field(default_factory=list)


class ClauseCompiler:
    """Compiles one clause; `source(i, atom)` names the table read by the i-th
    positive atom of the body (full relation or a delta)."""

    def __init__(self, kinds: dict[str, str], table: Callable[[str], str],
                 source: Callable[[int, Atom], str] | None = None,
                 extra_atom_conds: Callable[[int, Atom, str], list[str]] | None = None):
        self.kinds = kinds
        self.table = table
        self.source = source or (lambda i, atom: table(atom.relation))
        self.extra_atom_conds = extra_atom_conds
        self.counter = 0
        self.items: list = []   # the whole clause: tells an aggregate's outer variables

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ---- clause ----
    def select(self, head_exprs, body, distinct: bool = False, head_arity: int | None = None) -> str:
        self.items = list(body) + list(head_exprs)
        scope = self.body(body, {}, top=True)
        if head_arity == 0 or (head_arity is None and not head_exprs):
            outs = f"TRUE AS {UNIT_COLUMN}"
        else:
            outs = ", ".join(f"{self.expr(e, scope)} AS c{i}" for i, e in enumerate(head_exprs))
        return self._assemble(outs, scope, distinct)

    def bindings(self, body, names: list[str]) -> str:
        """SELECT of the given variables over all solutions of a body (explain)."""
        self.items = list(body)
        scope = self.body(body, {}, top=True)
        outs = ", ".join(f"{scope.env[n]} AS {ident(n)}" for n in names) or "TRUE AS u"
        return self._assemble(outs, scope, False)

    @staticmethod
    def _assemble(outs: str, scope: _Scope, distinct: bool) -> str:
        sql = f"SELECT {'DISTINCT ' if distinct else ''}{outs}"
        if scope.froms:
            sql += " FROM " + ", ".join(scope.froms)
        if scope.conds:
            sql += " WHERE " + " AND ".join(scope.conds)
        return sql

    # ---- bodies ----
    def body(self, lits, outer_env: dict[str, str], top: bool = False) -> _Scope:
        scope = _Scope(dict(outer_env))
        deferred = []   # (column sql, expr) pairs checked once every variable is bound
        position = 0
        for lit in lits:
            if not isinstance(lit, Atom):
                continue
            alias = self.fresh("t")
            src = self.source(position, lit) if top else self.table(lit.relation)
            scope.froms.append(f"{src} AS {alias}")
            if top and self.extra_atom_conds:
                scope.conds.extend(self.extra_atom_conds(position, lit, alias))
            position += 1
            for j, arg in enumerate(lit.args):
                col = f"{alias}.c{j}"
                if isinstance(arg, Var) and arg.name not in scope.env:
                    scope.env[arg.name] = col
                elif not _is_wildcard(arg):
                    deferred.append((col, arg))
        pending = [l for l in lits if isinstance(l, Comparison) and l.op == "="]
        progress = True
        while progress:
            progress = False
            for c in list(pending):
                for a, b in ((c.left, c.right), (c.right, c.left)):
                    if isinstance(a, Var) and a.name not in scope.env and self._computable(b, scope):
                        scope.env[a.name] = self.expr(b, scope)
                        pending.remove(c)
                        progress = True
                        break
        for col, arg in deferred:
            scope.conds.append(f"{col} = {self.expr(arg, scope)}")
        for lit in lits:
            if isinstance(lit, Comparison):
                if lit.op == "=" and lit not in pending:
                    continue
                scope.conds.append(self.comparison(lit, scope))
            elif isinstance(lit, Negation):
                scope.conds.append(self.negation(lit.atom, scope))
            elif isinstance(lit, BoolLit) and not lit.value:
                scope.conds.append("FALSE")
        return scope

    def _computable(self, e, scope: _Scope) -> bool:
        if isinstance(e, Var):
            return e.name in scope.env
        if isinstance(e, Functor):
            return all(self._computable(a, scope) for a in e.args)
        if isinstance(e, Aggregate):
            from sdylog.datalog.semantics import injected
            return all(v in scope.env for v in injected(e, self.items, set()))
        return True

    def negation(self, atom: Atom, scope: _Scope) -> str:
        alias = self.fresh("n")
        conds = [f"{alias}.c{j} = {self.expr(a, scope)}" for j, a in enumerate(atom.args)
                 if not _is_wildcard(a)]
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return f"NOT EXISTS (SELECT 1 FROM {self.table(atom.relation)} AS {alias}{where})"

    def comparison(self, c: Comparison, scope: _Scope) -> str:
        left, right = self.expr(c.left, scope), self.expr(c.right, scope)
        if c.op == "match":
            sql = f"regexp_full_match({right}, {left})"
        elif c.op == "contains":
            sql = f"contains({right}, {left})"
        else:
            return f"({left} {_COMPARE[c.op]} {right})"
        return f"(NOT {sql})" if c.negated else sql

    # ---- expressions ----
    def expr(self, e, scope: _Scope) -> str:
        if isinstance(e, Var):
            return scope.env[e.name]
        if isinstance(e, NumberLit):
            return literal_sql(e.value, e.kind)
        if isinstance(e, StringLit):
            return literal_sql(e.value, SYMBOL)
        if isinstance(e, Aggregate):
            return self.aggregate(e, scope)
        if isinstance(e, Functor):
            return self.functor(e, scope)
        raise TypeError(f"cannot compile {e!r}")

    def functor(self, f: Functor, scope: _Scope) -> str:
        a = [self.expr(x, scope) for x in f.args]
        op = f.op
        kind = expr_kind(f, self.kinds)
        if op in _ARITH:
            return f"({a[0]} {_ARITH[op]} {a[1]})"
        if op == "/":
            return f"({a[0]} / {a[1]})" if kind == FLOAT else f"({a[0]} // {a[1]})"
        if op == "^":
            return f"pow({a[0]}, {a[1]})" if kind == FLOAT else f"CAST(pow({a[0]}, {a[1]}) AS BIGINT)"
        if op == "neg":
            return f"(-{a[0]})"
        if op == "bnot":
            return f"(~{a[0]})"
        if op == "bxor":
            return f"xor({a[0]}, {a[1]})"
        if op == "land":
            return f"CAST(({a[0]} <> 0) AND ({a[1]} <> 0) AS BIGINT)"
        if op == "lor":
            return f"CAST(({a[0]} <> 0) OR ({a[1]} <> 0) AS BIGINT)"
        if op == "lxor":
            return f"CAST(({a[0]} <> 0) <> ({a[1]} <> 0) AS BIGINT)"
        if op == "lnot":
            return f"CAST({a[0]} = 0 AS BIGINT)"
        if op == "min":
            return f"least({', '.join(a)})"
        if op == "max":
            return f"greatest({', '.join(a)})"
        if op == "cat":
            return f"concat({', '.join(a)})"
        if op == "strlen":
            return f"CAST(strlen({a[0]}) AS BIGINT)"
        if op == "substr":
            # std::string::substr: empty (and a warning in Soufflé) when the start is out of range
            s, i, n = a
            return (f"(CASE WHEN {i} < 0 OR {i} > strlen({s}) THEN '' "
                    f"ELSE substr({s}, {i} + 1, CASE WHEN {n} < 0 THEN strlen({s}) ELSE {n} END) END)")
        if op == "to_number":
            src = expr_kind(f.args[0], self.kinds)
            if src == SYMBOL:
                # std::stoi: the leading integer of the string; an error when there is none
                return (f"COALESCE(TRY_CAST(regexp_extract({a[0]}, '^\\s*[+-]?[0-9]+') AS BIGINT), "
                        f"error(concat('wrong string provided by to_number(\"', {a[0]}, '\")')))")
            return f"CAST(trunc({a[0]}) AS BIGINT)" if src == FLOAT else a[0]
        if op == "to_string":
            return f"CAST({a[0]} AS VARCHAR)"
        if op == "to_float":
            return f"CAST({a[0]} AS DOUBLE)"
        if op == "to_unsigned":
            src = expr_kind(f.args[0], self.kinds)
            return f"CAST(trunc({a[0]}) AS BIGINT)" if src == FLOAT else a[0]
        raise TypeError(f"unknown functor {op}")

    def aggregate(self, agg: Aggregate, scope: _Scope) -> str:
        inner = self.body(agg.body, scope.env)
        if agg.op == "count":
            value = "count(*)"
        else:
            t = self.expr(agg.target, inner)
            kind = expr_kind(agg.target, self.kinds)
            if agg.op == "sum":
                value = f"COALESCE(sum({t}), 0)" if kind == FLOAT else f"CAST(COALESCE(sum({t}), 0) AS BIGINT)"
            elif agg.op == "mean":
                value = f"avg({t})"
            else:
                value = f"{agg.op}({t})"
        alias = self.fresh("a")
        sub = f"SELECT {value} AS v"
        if inner.froms:
            sub += " FROM " + ", ".join(inner.froms)
        if inner.conds:
            sub += " WHERE " + " AND ".join(inner.conds)
        scope.froms.append(f"LATERAL ({sub}) AS {alias}")
        if agg.op in ("min", "max", "mean"):
            scope.conds.append(f"{alias}.v IS NOT NULL")   # no result over an empty body
        return f"{alias}.v"


def _is_wildcard(e) -> bool:
    from sdylog.datalog.ast import Wildcard
    return isinstance(e, Wildcard)
