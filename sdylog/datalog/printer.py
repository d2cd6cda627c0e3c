"""A program back as Soufflé text (one file, includes expanded): what the
Soufflé backend compiles and what identifies a program in its cache."""
from __future__ import annotations

from sdylog.datalog.ast import (INFIX, PREFIX, PREFIX_PRECEDENCE, Aggregate, AnyOf, Atom, BoolLit, Comparison,
                                Functor, Negation, NumberLit, StringLit, Var, Wildcard)

_ESCAPE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(s: str) -> str:
    return '"' + "".join(_ESCAPE.get(c, c) for c in s) + '"'


def expr(e, parent: float = 0) -> str:
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Wildcard):
        return "_"
    if isinstance(e, NumberLit):
        if e.kind == "float":
            text = repr(float(e.value))
            if "e" in text or "." not in text:   # Soufflé reads only digits.digits
                text = format(float(e.value), ".20f").rstrip("0")
                text = text + "0" if text.endswith(".") else text
        else:
            text = str(e.value) + ("u" if e.kind == "unsigned" else "")
        return f"({text})" if text.startswith("-") and parent > 0 else text
    if isinstance(e, StringLit):
        return quote(e.value)
    if isinstance(e, Functor):
        if e.op in INFIX:
            p = INFIX[e.op]
            sep = f" {e.op} "
            right_p = p if e.op == "^" else p + 1
            left_p = p + 1 if e.op == "^" else p
            text = expr(e.args[0], left_p) + sep + expr(e.args[1], right_p)
            return f"({text})" if p < parent else text
        if e.op in PREFIX:
            text = PREFIX[e.op] + expr(e.args[0], PREFIX_PRECEDENCE)
            return f"({text})" if PREFIX_PRECEDENCE < parent else text
        return f"{e.op}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, Aggregate):
        target = f" {expr(e.target, 100)}" if e.target is not None else ""
        return f"{e.op}{target} : {{ {', '.join(literal(l) for l in e.body)} }}"
    raise TypeError(e)


def atom(a: Atom) -> str:
    return f"{a.relation}({', '.join(expr(x) for x in a.args)})"


def literal(l) -> str:
    if isinstance(l, Atom):
        return atom(l)
    if isinstance(l, Negation):
        return "!" + atom(l.atom)
    if isinstance(l, Comparison):
        if l.op in ("match", "contains"):
            return ("!" if l.negated else "") + f"{l.op}({expr(l.left)}, {expr(l.right)})"
        return f"{expr(l.left)} {l.op} {expr(l.right)}"
    if isinstance(l, AnyOf):
        return "(" + " ; ".join(", ".join(literal(c) for c in option) for option in l.options) + ")"
    if isinstance(l, BoolLit):
        return "true" if l.value else "false"
    raise TypeError(l)


def clause(c) -> str:
    if not c.body:
        return f"{atom(c.head)}."
    return f"{atom(c.head)} :- {', '.join(literal(l) for l in c.body)}."


def print_program(program, io: list[str] | None = None) -> str:
    """Soufflé text of a program. `io`, when given, replaces the program's
    .input/.output/.printsize lines."""
    lines = []
    for t in program.types.values():
        lines.append(f".type {t.name} <: {t.bases[0]}" if t.subset else f".type {t.name} = {' | '.join(t.bases)}")
    for r in program.relations.values():
        cols = ", ".join(f"{c.name}: {c.type_name}" for c in r.columns)
        lines.append(f".decl {r.name}({cols})")
    if io is None:
        for d in program.directives:
            params = ", ".join(f"{k}={quote(v)}" for k, v in sorted(d.params.items()))
            lines.append(f".{d.kind} {d.relation}" + (f"({params})" if params else ""))
    else:
        lines.extend(io)
    for sub in getattr(program, "subsumptions", ()):
        body = f" :- {', '.join(literal(l) for l in sub.body)}" if sub.body else ""
        lines.append(f"{atom(sub.dominated)} <= {atom(sub.dominating)}{body}.")
    lines.extend(clause(c) for c in program.clauses)
    return "\n".join(lines) + "\n"
