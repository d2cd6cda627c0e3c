"""A runtime error of an evaluation (a division by zero, an integer
overflow, a value that does not convert) as a diagnostic at the rule that
raised it, `file:line:col: error: division by zero in a rule of 'r'`, never
at the Python it was compiled to: compiled clause code is named after its
rules' ids (`<rule N>`, `<rules N M>`: pyeval); of several, those using an
operator that can raise the error, else each is named."""
from __future__ import annotations

import re

from sdylog.datalog.ast import Functor, nodes
from sdylog.datalog.lexer import error
from sdylog.ir.diagnostics import SdylogError

_RULE_CODE = re.compile(r"^<rules? ([\d ]+)>$")

_ARITHMETIC = frozenset({"+", "-", "*", "^", "neg"})
_PYTHON = {ZeroDivisionError: ("division by zero", {"/", "%"}),
           OverflowError: ("number out of range", _ARITHMETIC | {"to_float"})}


def error_from_code(e: BaseException, rules: list) -> SdylogError | None:
    """The diagnostic for an exception raised inside compiled clause code
    (`rules`: the engine's rule ids -> (program, clause index)); None when
    no such code raised it, or it is located already."""
    if isinstance(e, SdylogError) and e.location:
        return None
    ids = None
    tb = e.__traceback__
    while tb is not None:                      # (the innermost rule code counts)
        m = _RULE_CODE.match(tb.tb_frame.f_code.co_filename)
        if m:
            ids = [int(i) for i in m[1].split()]
        tb = tb.tb_next
    if ids is None:
        return None
    if isinstance(e, SdylogError):
        message, ops = e.message, ({"/", "%"} if "division" in e.message else set())
    else:
        message, ops = _PYTHON.get(type(e), (f"{type(e).__name__}: {e}", set()))
    clauses = [rules[i] for i in ids if 0 <= i < len(rules)]
    return at_rules(message, _narrowed(clauses, ops))


def at_rules(message: str, clauses: list) -> SdylogError:
    """`message` at the one rule in `clauses`, or naming each of them."""
    if not clauses:
        return error(None, message)
    if len(clauses) == 1:
        program, ci = clauses[0]
        c = program.clauses[ci]
        return error(c.loc, f"{message} in a rule of '{c.head.relation}'")
    where = ", ".join(f"{p.clauses[ci].loc} ('{p.clauses[ci].head.relation}')" for p, ci in clauses)
    return error(None, f"{message} in one of the rules at {where}")


def _narrowed(clauses: list, ops) -> list:
    """The clauses that use one of the operators `ops` (all of them if none does)."""
    using = [(p, ci) for p, ci in clauses
             if any(isinstance(x, Functor) and x.op in ops for x in nodes(p.clauses[ci]))]
    return using or clauses
