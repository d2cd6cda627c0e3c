"""Clauses lowered to the instructions of the C evaluators (sdylog.datalog._native,
source in sdylog/datalog/native/; interp.h's header lists the instruction set).

The plan (join order, index keys, what is bound where) is BodyCompiler's
(pyeval.py): NativeCompiler only overrides how each planned step is emitted,
as int64 words instead of Python source. Registers 0..arity-1 hold the delta
tuple's columns (the clause's `_c0, _c1, ...`); variables and expression
values get the next ones; each loop gets a tuple slot.

An aggregate (count, sum, min, max of integers) becomes an AGG instruction
followed by its body's program, ending in ACC; its registers are the
clause's (the variables it injects are read where they are).

Symbols are interned ids (`symbols`: str -> id; None: no symbol lowers):
equality on ids is equality on strings, nothing else is.

What cannot be lowered raises CannotLower (the caller keeps the Python
path): floats, string functors and comparisons of order on symbols,
functors other than the integer ones the C code computes, `mean`.
"""
from __future__ import annotations

import os
from functools import partial

from sdylog.datalog.ast import Aggregate, Functor, NumberLit, StringLit, Var
from sdylog.datalog.pyeval import BodyCompiler, Unsupported, _clause_lines, delta_group_clauses, domination_clauses
from sdylog.datalog.semantics import injected

try:
    from sdylog.datalog import _native
except ImportError:   # built where a C compiler exists (setup.py); else the Python path
    _native = None

# opcodes and operators: the enums at the top of native/interp.h
(OP_END, OP_SCAN, OP_LOOKUP, OP_BIND, OP_CHECK, OP_CONST, OP_ARITH, OP_UNARY, OP_CMP,
 OP_NOTIN, OP_EMPTY, OP_DISTINCT, OP_FAIL, OP_EMIT, OP_TRUE, OP_AGG, OP_ACC) = range(17)
_AGG = {"count": 0, "sum": 1, "min": 2, "max": 3}
_ARITH = {"+": 0, "-": 1, "*": 2, "/": 3, "%": 4, "min": 5, "max": 6, "band": 7, "bor": 8, "bxor": 9,
          "bshl": 10, "bshr": 11}
_UNARY = {"neg": 0, "bnot": 1}
_CMP = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
_ORDER = frozenset({"<", "<=", ">", ">="})
MAX_REGISTERS = 1024
MAX_TUPLES = 64
INT64 = (-(1 << 63), (1 << 63) - 1)
NATIVE_KINDS = frozenset({"number", "unsigned"})


class CannotLower(Exception):
    """A clause the C evaluator cannot run (not an error: Python runs it)."""


def native_module():
    """The C extension, or None when it is not built or SDYLOG_NATIVE=0."""
    if os.environ.get("SDYLOG_NATIVE", "1") == "0":
        return None
    return _native


class IndexSlots:
    """The indexes lowered programs read, numbered: (relation, key columns);
    a lookup and a negation on the same columns share one."""

    def __init__(self, ns):
        self.ns = ns
        self.number: dict[tuple, int] = {}

    def slot(self, name: str) -> int:
        rel, key, _negated = self.ns.specs[name]
        return self.number.setdefault((rel, tuple(key)), len(self.number))

    def specs(self) -> list[tuple]:
        return sorted(self.number, key=self.number.get)


class NativeCompiler(BodyCompiler):
    """BodyCompiler emitting instruction words (see the module docstring)."""

    def __init__(self, *args, arity: int, slots: IndexSlots, symbols=None, **kw):
        super().__init__(*args, **kw)
        self.symbols = symbols
        self.code: list[int] = []
        self.regs: dict[str, int] = {}
        self.nregs = arity
        self.tuples: dict[str, int] = {}
        self.consts: dict[int, int] = {}   # value -> the register holding it (set once, not per use)
        self.slots = slots

    def line(self, text: str):
        raise CannotLower(f"no instruction for {text.strip()!r}")

    def program(self) -> tuple:
        """(registers, tuple slots, instruction words, [register, constant, ...])."""
        if self.nregs > MAX_REGISTERS or len(self.tuples) > MAX_TUPLES:
            raise CannotLower("too many registers")
        return (max(self.nregs, 1), len(self.tuples), self.code, [w for v, r in self.consts.items() for w in (r, v)])

    def new_reg(self) -> int:
        self.nregs += 1
        return self.nregs - 1

    def var(self, name: str) -> int:
        alias = self.alias.get(name)
        if alias is not None:
            return int(alias[2:])   # `_c{i}`: the delta tuple's column i
        reg = self.regs.get(name)
        if reg is None:
            reg = self.regs[name] = self.new_reg()
        return reg

    def tuple_slot(self, tvar: str) -> int:
        return self.tuples.setdefault(tvar, len(self.tuples))

    # ---- expressions: a register holding the value ----
    def expr(self, e) -> int:
        if isinstance(e, Var):
            return super().expr(e)   # (its register: self.var)
        if isinstance(e, NumberLit):
            if e.kind == "float" or not isinstance(e.value, int) or not INT64[0] <= e.value <= INT64[1]:
                raise CannotLower("not a 64-bit integer")
            return self.const(e.value)
        if isinstance(e, StringLit):
            if self.symbols is None:
                raise CannotLower("symbol")
            return self.const(self.symbols(e.value))
        if isinstance(e, Functor):
            if any(self._symbolic(a) for a in e.args):
                raise CannotLower(f"functor {e.op} of symbols")
            args = [self.expr(a) for a in e.args]
            op = e.op
            if op in _UNARY and len(args) == 1:
                r = self.new_reg()
                self.code += [OP_UNARY, _UNARY[op], r, args[0]]
                return r
            if op in _ARITH and (len(args) == 2 or (op in ("min", "max") and len(args) > 2)):
                acc = args[0]
                for b in args[1:]:
                    r = self.new_reg()
                    self.code += [OP_ARITH, _ARITH[op], r, acc, b]
                    acc = r
                return acc
            raise CannotLower(f"functor {op}")
        if isinstance(e, Aggregate):
            return self.aggregate(e)
        raise CannotLower(f"expression {e!r}")

    def const(self, value: int) -> int:
        r = self.consts.get(value)
        if r is None:
            r = self.consts[value] = self.new_reg()
        return r

    def _symbolic(self, e) -> bool:
        """An expression that may hold a symbol (its id's order is no string order)."""
        if isinstance(e, StringLit):
            return True
        if isinstance(e, Var):
            return self.kinds is None or self.kinds.get(e.name) not in NATIVE_KINDS
        return False

    def aggregate(self, agg: Aggregate) -> int:
        """AGG, the program of the aggregate's body ending in ACC: the register
        holding its value (BodyCompiler.aggregate's plan)."""
        op = _AGG.get(agg.op)
        if op is None or (agg.target is not None and not self._integer(agg.target)):
            raise CannotLower(f"aggregate {agg.op}")
        names = sorted(injected(agg, self.items, self.outer))
        sub = NativeCompiler(self.ns, list(agg.body) + ([agg.target] if agg.target is not None else []),
                             self.sizes, self.live, set(names), self.kinds, self.lazy, self.fanout, self.indexes,
                             arity=0, slots=self.slots, symbols=self.symbols)
        sub.base_depth = -1   # (as BodyCompiler.aggregate: its loops run once per call)
        sub.regs = {n: self.var(n) for n in names}
        sub.nregs = self.nregs
        sub.consts = self.consts
        sub.tuples = {f"outer {k}": v for k, v in self.tuples.items()}   # (its own slots come after)
        acc, cnt = sub.new_reg(), sub.new_reg()

        def accumulate(c):
            value = c.expr(agg.target) if agg.target is not None else acc
            c.code += [OP_ACC, op, acc, cnt, value]
            return []
        try:
            sub.compile_body(agg.body, None, accumulate)
        except Unsupported as e:
            raise CannotLower(str(e)) from None
        self.nregs = sub.nregs
        for k, v in sub.tuples.items():
            if not k.startswith("outer "):
                self.tuples[f"agg{acc} {k}"] = v
        self.code += [OP_AGG, op, acc, cnt, len(sub.code), *sub.code]
        return acc

    # ---- emission ----
    def emit_begin(self):
        pass

    def emit_loop(self, tvar, atom, source, key_pos, key_vals):
        slot, t = self.slots.slot(source), self.tuple_slot(tvar)
        if key_pos:
            self.code += [OP_LOOKUP, slot, t, len(key_vals), *key_vals]
        else:
            self.code += [OP_SCAN, slot, t]

    def emit_delta_loop(self, tvar):
        raise CannotLower("ungrouped delta")

    def column(self, tvar, i, cols):
        if cols:
            return i
        r = self.new_reg()
        self.code += [OP_BIND, r, self.tuple_slot(tvar), i]
        return r

    def emit_bind(self, name, tvar, i):
        self.code += [OP_BIND, self.var(name), self.tuple_slot(tvar), i]

    def emit_checks(self, tvar, conds, cols):
        for i, v in conds:
            self.code += [OP_CMP, _CMP["="], i, v] if cols else [OP_CHECK, self.tuple_slot(tvar), i, v]

    def emit_distinct(self, tvar):
        self.code += [OP_DISTINCT, self.tuple_slot(tvar)]

    def emit_solve(self, name, value, inverse, c):
        self.code += [OP_ARITH, _ARITH[inverse], self.var(name), value, self.expr(c)]

    def emit_negation(self, name, relation, vals):
        slot = self.slots.slot(name)
        self.code += [OP_NOTIN, slot, len(vals), *vals] if vals else [OP_EMPTY, slot]

    def emit_assign(self, name, value):
        self.regs[name] = value   # (registers are written once per binding: share it)

    def emit_fail(self):
        self.code += [OP_FAIL]

    def comparison_step(self, c):
        if c.op not in _CMP or (c.op in _ORDER and (self._symbolic(c.left) or self._symbolic(c.right))):
            raise CannotLower(f"comparison {c.op}")
        self.code += [OP_CMP, _CMP[c.op], self.expr(c.left), self.expr(c.right)]

    def match_lines(self, head_exprs, head_rel, rule, add):
        if head_rel is None:
            self.code += [OP_TRUE]
        else:
            regs = [self.expr(e) for e in head_exprs]
            self.code += [OP_EMIT, head_rel, rule, len(regs), *regs]
        return []


def lower_clause(slots: IndexSlots, body, head_exprs, head_rel: int, kinds, symbols=None, **plan) -> tuple:
    """The program of one clause run once, no delta (pyeval.compile_clause's plan)."""
    comp = partial(NativeCompiler, arity=0, slots=slots, symbols=symbols)
    _, c = _clause_lines(slots.ns, body, head_exprs, head_rel, -1, None, plan.pop("sizes", None),
                         plan.pop("live", frozenset()), None, kinds, False, None, compiler=comp, **plan)
    return c.program()


def lower_delta_group(slots: IndexSlots, clauses, arity: int, symbols=None, **plan) -> list[tuple]:
    """The programs of a delta group (pyeval.compile_delta_group's arguments in `plan`)."""
    comp = partial(NativeCompiler, arity=arity, slots=slots, symbols=symbols)
    return [c.program() for _, c in delta_group_clauses(slots.ns, clauses, compiler=comp, **plan)]


def lower_domination_test(slots: IndexSlots, tests, arity: int, symbols=None, **plan) -> list[tuple]:
    """The programs of a domination test (pyeval.compile_domination_test's arguments in `plan`)."""
    comp = partial(NativeCompiler, arity=arity, slots=slots, symbols=symbols)
    return [c.program() for _, c in domination_clauses(slots.ns, tests, compiler=comp, **plan)]
