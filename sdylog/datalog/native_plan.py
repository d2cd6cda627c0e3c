"""Plans (plan.py) lowered to the instructions of the C evaluators
(sdylog.datalog._native, source in sdylog/datalog/native/; interp.h's header
lists the instruction set).

A plan's registers are the program's (0..arity-1 the delta tuple's
columns); its temporaries and constants get the next ones; an Assign shares
the register of its value (no copy). An aggregate (count, sum, min, max of
integers) becomes an AGG instruction followed by its steps' program, ending
in ACC.

A lowered program keeps what depends on the database apart: symbol
constants (their interned ids differ per database) are filled in by
bind(), so a program lowered once serves every run of its program. (C
programs name no rule: a run that must report one, a runtime error or a
rank lowered, hands the stratum back to Python.)

What cannot be lowered raises CannotLower (the caller keeps the Python
path): floats, string functors, functors other than the integer ones
the C code computes, `mean`, a negation of a relation of the stratum.
"""
from __future__ import annotations

import os
from array import array
from dataclasses import dataclass

from sdylog.datalog import plan as P
from sdylog.datalog.pickled import Pickled

try:
    from sdylog.datalog import _native
except ImportError:   # built where a C compiler exists (setup.py); else the Python path
    _native = None

# opcodes and operators: the enums at the top of native/interp.h
(OP_END, OP_SCAN, OP_LOOKUP, OP_BIND, OP_CHECK, OP_ARITH, OP_UNARY, OP_CMP,
 OP_NOTIN, OP_EMPTY, OP_DISTINCT, OP_FAIL, OP_EMIT, OP_TRUE, OP_AGG, OP_ACC, OP_ANY,
 OP_BRANCH, OP_JOIN, OP_MOVE) = range(20)
_AGG = {"count": 0, "sum": 1, "min": 2, "max": 3}
_ARITH = {"+": 0, "-": 1, "*": 2, "/": 3, "%": 4, "min": 5, "max": 6, "band": 7, "bor": 8, "bxor": 9,
          "bshl": 10, "bshr": 11}
_UNARY = {"neg": 0, "bnot": 1}
_CMP = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
_SYMBOL_ORDER = {"<": 6, "<=": 7, ">": 8, ">=": 9}   # (of symbols: their strings' order)
MAX_REGISTERS = 1024
MAX_TUPLES = 64
INT64 = (-(1 << 63), (1 << 63) - 1)


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

    def __init__(self):
        self.number: dict[tuple, int] = {}

    def slot(self, relation: str, key: tuple) -> int:
        return self.number.setdefault((relation, tuple(key)), len(self.number))

    def specs(self) -> list[tuple]:
        return sorted(self.number, key=self.number.get)


@dataclass(frozen=True)
class Lowered:
    """A program of the C evaluator, before bind()."""
    nregs: int
    ntuples: int
    words: tuple
    consts: tuple      # register, value, register, value, ... (a symbol's value: 0 until bound)
    symbols: tuple     # (position in consts, symbol) of each symbol constant

    def bind(self, intern) -> tuple:
        """(registers, tuple slots, words, [register, constant, ...]) for a
        database that interns symbols with `intern`."""
        consts = self.consts
        if self.symbols:
            consts = list(consts)
            for pos, symbol in self.symbols:
                consts[pos] = intern(symbol)
        return self.nregs, self.ntuples, self.words, consts


class _Lowering:
    def __init__(self, plan: P.ClausePlan, slots: IndexSlots, live):
        self.plan, self.slots, self.live = plan, slots, live
        self.code: list[int] = []
        self.nregs = plan.nregs
        self.alias: dict[int, int] = {}    # plan register -> the register holding it (Assign)
        self.consts: dict = {}             # (type, value) -> register (set once, not per use)

    def new_reg(self) -> int:
        self.nregs += 1
        return self.nregs - 1

    def symbol(self, v, surely: bool = False) -> bool:
        """A value that may hold a symbol (its id's order is no string
        order); `surely`: one known to hold a symbol."""
        if isinstance(v, P.Const):
            return isinstance(v.value, str)
        if not isinstance(v, P.Reg):
            return False
        kind = self.plan.kinds[v.n]
        return kind == "symbol" if surely else kind not in P.INTEGER_KINDS

    def value(self, v) -> int:
        """A register holding the value."""
        if isinstance(v, P.Reg):
            return self.alias.get(v.n, v.n)
        if isinstance(v, P.Const):
            x = v.value
            if isinstance(x, float) or (isinstance(x, int) and not INT64[0] <= x <= INT64[1]):
                raise CannotLower("not a 64-bit integer")
            r = self.consts.get((type(x), x))
            if r is None:
                r = self.consts[(type(x), x)] = self.new_reg()
            return r
        if any(self.symbol(a) for a in v.args):
            raise CannotLower(f"functor {v.op} of symbols")
        args = [self.value(a) for a in v.args]
        if v.op in _UNARY and len(args) == 1:
            r = self.new_reg()
            self.code += [OP_UNARY, _UNARY[v.op], r, args[0]]
            return r
        if v.op in _ARITH and (len(args) == 2 or (v.op in ("min", "max") and len(args) > 2)):
            acc = args[0]
            for b in args[1:]:
                r = self.new_reg()
                self.code += [OP_ARITH, _ARITH[v.op], r, acc, b]
                acc = r
            return acc
        raise CannotLower(f"functor {v.op}")

    def steps(self, steps) -> None:
        code = self.code
        for s in steps:
            if isinstance(s, P.Scan):
                code += [OP_SCAN, self.slots.slot(s.relation, ()), s.t]
            elif isinstance(s, P.Lookup):
                vals = [self.value(v) for v in s.values]
                code += [OP_LOOKUP, self.slots.slot(s.relation, s.key), s.t, len(vals), *vals]
            elif isinstance(s, P.Bind):
                code += [OP_BIND, s.reg, s.t, s.col]
            elif isinstance(s, P.Check):
                code += [OP_CHECK, s.t, s.col, self.value(s.value)]
            elif isinstance(s, P.Assign):
                self.alias[s.reg] = self.value(s.value)
            elif isinstance(s, P.Test):
                code += [OP_CMP, *self.comparison(s)]
            elif isinstance(s, P.Either):
                options = [[self.comparison(t) for t in option] for option in s.options]   # (ARITHs first)
                words = [w for option in options for w in (len(option), *(w for t in option for w in t))]
                code += [OP_ANY, len(words), *words]
            elif isinstance(s, P.Branch):
                self.branch(s)
            elif isinstance(s, P.Absent):
                if s.relation in self.live:
                    raise CannotLower("negation of a relation of the stratum")   # (Python reports it)
                slot = self.slots.slot(s.relation, s.key)
                vals = [self.value(v) for v in s.values]
                code += [OP_NOTIN, slot, len(vals), *vals] if vals else [OP_EMPTY, slot]
            elif isinstance(s, P.Distinct):
                code += [OP_DISTINCT, s.t]
            elif isinstance(s, P.Fail):
                code += [OP_FAIL]
            elif isinstance(s, P.Aggregate):
                self.aggregate(s)
            elif isinstance(s, P.Emit):
                vals = [self.value(v) for v in s.values]
                code += [OP_EMIT, s.relation, len(vals), *vals]
            elif isinstance(s, P.Holds):
                code += [OP_TRUE]
            else:
                raise CannotLower(f"step {s!r}")

    def branch(self, b: P.Branch) -> None:
        """BRANCH n m1..mn, then each option's program (its tests, then a
        MOVE per Assign: the registers are shared by the options), ending in
        JOIN k: on to the words after the last option."""
        outer, bodies = self.code, []
        for option in b.options:
            self.code = []
            for x in option:
                if isinstance(x, P.Assign):
                    self.code += [OP_MOVE, x.reg, self.value(x.value)]
                else:
                    self.steps([x])
            bodies.append(self.code + [OP_JOIN, 0])
        self.code = outer
        self.code += [OP_BRANCH, len(bodies), *(len(body) for body in bodies)]
        for k, body in enumerate(bodies):
            body[-1] = 2 + sum(len(rest) for rest in bodies[k + 1:])   # (from JOIN to after the last option)
            self.code += body

    def comparison(self, t: P.Test) -> tuple[int, int, int]:
        """(operator, register, register) of a Test: an order of symbols
        compares their strings (the C code reads the database's), of other
        values their integers."""
        if t.op not in _CMP:
            raise CannotLower(f"comparison {t.op}")
        op = _CMP[t.op]
        if t.op in _SYMBOL_ORDER and (self.symbol(t.left) or self.symbol(t.right)):
            if not (self.symbol(t.left, surely=True) and self.symbol(t.right, surely=True)):
                raise CannotLower(f"comparison {t.op} of values of unknown kinds")
            op = _SYMBOL_ORDER[t.op]
        return op, self.value(t.left), self.value(t.right)

    def aggregate(self, agg: P.Aggregate) -> None:
        op = _AGG.get(agg.op)
        if op is None or (agg.target is not None and not P.is_integer(agg.target, self.plan.kinds)):
            raise CannotLower(f"aggregate {agg.op}")
        acc, cnt = self.new_reg(), self.new_reg()
        outer, self.code = self.code, []   # (its body holds no EMIT)
        self.steps(agg.steps)
        value = self.value(agg.target) if agg.target is not None else acc
        self.code += [OP_ACC, op, acc, cnt, value]
        body, self.code = self.code, outer
        self.code += [OP_AGG, op, acc, cnt, len(body), *body]
        self.alias[agg.reg] = acc


def lower(plan: P.ClausePlan, slots: IndexSlots, live=frozenset()) -> Lowered:
    """The C program of a plan; its indexes numbered by `slots`; `live`:
    the relations of the stratum."""
    low = _Lowering(plan, slots, live)
    low.steps(plan.steps)
    if low.nregs > MAX_REGISTERS or plan.ntuples > MAX_TUPLES:
        raise CannotLower("too many registers")
    consts = [w for (_, x), r in low.consts.items() for w in (r, 0 if isinstance(x, str) else x)]
    symbols = [(2 * k + 1, x) for k, (_, x) in enumerate(low.consts) if isinstance(x, str)]
    return Lowered(max(low.nregs, 1), plan.ntuples, tuple(low.code), tuple(consts), tuple(symbols))


def lower_stratum(base, deltas, here, doms=()) -> Pickled | None:
    """The C programs of a stratum's plans (plan.py's): (base programs, delta
    programs per relation, domination programs per relation of a
    rank-ordered stratum, index specs), pickled on their own (a process that
    loads the plans its layout bound, native_db.TableLayout, reads them only
    to bind them for another database); None when a plan does not lower.
    `here`: the stratum's relations."""
    slots = IndexSlots()
    try:
        return Pickled.of(([lower(p, slots) for p in base], [[lower(p, slots, here) for p in g] for g in deltas],
                           [[lower(p, slots, here) for p in t] for t in doms], slots.specs()))
    except CannotLower:
        return None


def plan_words(out: list, indexes: list, base: list, deltas: list, checks: list, ranks=(), doms=()) -> bytes:
    """A _native.Plan's words (int64; see its doc): out, the stratum's tables;
    indexes, (table, key columns, live); base and, per relation of out,
    deltas: bound programs (Lowered.bind); checks, (table, lo, hi); a
    rank-ordered stratum's ranks (per relation, its rank columns, as many
    for each: ranked.RankedStratum checks it) and doms (per relation, its
    domination tests). One buffer, read in two steps (db.c plan_of,
    plan_ready): its head (out, indexes, checks) when a database is first
    offered the plan, its programs when it first runs."""
    nrank = len(ranks[0]) if ranks else 0
    words = [len(out), len(indexes), len(checks), nrank, *out]
    for table, key, live in indexes:
        words += [table, int(live), len(key), *key]
    for check in checks:
        words += check
    for programs in (base, *deltas):
        _program_words(words, programs)
    for cols, tests in zip(ranks, doms):
        words += cols
        _program_words(words, tests)
    return array("q", words).tobytes()


def _program_words(words: list, programs: list) -> None:
    words.append(len(programs))
    for nregs, ntuples, code, consts in programs:
        words += [nregs, ntuples, len(code), *code, len(consts) // 2, *consts]
