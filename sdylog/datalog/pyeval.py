"""Clauses compiled to Python functions: nested loops over hash indexes.

What the in-memory engine and the rank-ordered evaluation run. A clause body
becomes a function `f(delta, E)` (or `f(E)` with no delta atom): the delta
atom's tuples are looped over first, then the other literals in an order
chosen greedily (filters as soon as their variables are bound, then the
atom with the most bound arguments, through an index on those columns),
and every solution calls `E(relation_index, head_tuple, rule_id)`.

Indexes are named by (relation, key positions, negated) and resolved in a
namespace the caller fills in (`Namespace.bind`): a dict key -> list of
tuples, a set of keys for negations, or the relation's tuples for a scan.
A key of one column is the bare value; of several, a tuple.

Soufflé's semantics kept: integer `/` and `%` truncate toward zero; `min` /
`max` / `mean` over nothing have no result; `sum` over nothing is 0.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict

from sdylog.datalog import plan as P
from sdylog.datalog.lexer import error
from sdylog.datalog.table import cell


# ---------------------------------------------------------------- runtime helpers
def _div(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    if b == 0:
        raise error(None, "division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _mod(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(a, b)
    return a - b * _div(a, b)   # (_div reports a division by zero)


def _substr(s, i, n):
    if i < 0 or i > len(s):
        return ""
    return s[i:] if n < 0 else s[i:i + n]


def _match(pattern, s):
    return re.fullmatch(pattern, s) is not None


def _to_number(s):
    if isinstance(s, str):
        m = re.match(r"\s*[+-]?[0-9]+", s)
        if not m:
            raise error(None, f'wrong string provided by to_number("{s}")')
        return int(m.group(0))
    return int(s)


HELPERS = {"_div": _div, "_mod": _mod, "_substr": _substr, "_match": _match, "_to_number": _to_number,
           "_to_string": cell, "math": math}

# The Python of each functor of fixed arity, its arguments in order.
_FORMAT = {"+": "({} + {})", "-": "({} - {})", "*": "({} * {})", "/": "_div({}, {})", "%": "_mod({}, {})",
           "^": "({} ** {})", "band": "({} & {})", "bor": "({} | {})", "bxor": "({} ^ {})",
           "bshl": "({} << {})", "bshr": "({} >> {})", "bshru": "(({} % (1 << 64)) >> {})",
           "land": "int(bool({}) and bool({}))", "lor": "int(bool({}) or bool({}))",
           "lxor": "int(bool({}) != bool({}))", "neg": "(-{})", "bnot": "(~{})", "lnot": "int(not {})",
           "strlen": "len({})", "to_string": "_to_string({})", "to_number": "_to_number({})",
           "to_float": "float({})", "to_unsigned": "int({})", "substr": "_substr({}, {}, {})"}
_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class Namespace:
    """Names the indexes compiled code reads; the evaluator binds them."""

    def __init__(self):
        self.globals: dict = dict(HELPERS)
        self.specs: dict[str, tuple] = {}   # name -> (relation, key positions, negated)
        self._agg = 0
        self._envs: list = []   # (the globals of the functions stores made)

    def index(self, rel: str, key: tuple, negated: bool = False) -> str:
        name = f"{'N' if negated else 'I'}_{rel}_{'_'.join(map(str, key)) or 'all'}"
        self.specs[name] = (rel, key, negated)
        return name

    def fresh_function(self) -> str:
        self._agg += 1
        return f"_agg{self._agg}"

    def stores(self, rid: dict) -> tuple:
        """Per relation of a stratum (`rid`: relation -> position): its
        tuples (a set, empty), and insert(tup) -> bool (False: held already)
        and remove(tup) keeping the set and the indexes the compiled code
        reads of it (made here, empty: the evaluator binds the others) up to
        date, generated for them (a loop over the indexes costs more than
        the work). release() once done: the functions, the indexes and the
        namespace refer to each other, and refcounting then frees them now."""
        live: list[list] = [[] for _ in rid]   # per relation: (key positions, defaultdict) or ((), list of all)
        for name, (rel, key, negated) in self.specs.items():
            if rel in rid and name not in self.globals:
                if negated:
                    raise error(None, f"internal: negation of '{rel}' inside its own stratum")
                self.globals[name] = container = defaultdict(list) if key else []
                live[rid[rel]].append((key, container))
        sets = [set() for _ in rid]
        made = [_store_functions(store, indexes) for store, indexes in zip(sets, live)]
        self._envs = [env for _, _, env in made]
        return sets, [f for f, _, _ in made], [f for _, f, _ in made]

    def release(self) -> None:
        self.globals.clear()
        for env in self._envs:
            env.clear()


def _store_functions(store: set, live: list) -> tuple:
    """Namespace.stores' insert and remove for one relation, and the dict of their globals."""
    env = {"store": store}
    ins = ["def insert(t):", "    if t in store: return False", "    store.add(t)"]
    rem = ["def remove(t):", "    store.discard(t)"]
    for n, (key, d) in enumerate(live):
        env[f"d{n}"] = d
        if not key:
            ins.append(f"    d{n}.append(t)")
            rem.append(f"    d{n}.remove(t)")
            continue
        k = f"t[{key[0]}]" if len(key) == 1 else "(" + ", ".join(f"t[{i}]" for i in key) + ")"
        ins.append(f"    d{n}[{k}].append(t)")
        rem.append(f"    d{n}[{k}].remove(t)")
    ins.append("    return True")
    from sdylog.datalog.cache import CODES
    exec(CODES.compile("\n".join(ins) + "\n\n" + "\n".join(rem) + "\n", "<index code>"), env)
    return env["insert"], env["remove"], env


# ---------------------------------------------------------------- plans -> Python source
_AGGREGATE = {   # op -> (initial, step, result)
    "count": ("acc = 0", "acc += 1", "return acc"),
    "sum": ("acc = 0", "acc += {t}", "return acc"),
    "mean": ("acc = 0; n = 0", "acc += {t}; n += 1", "return acc / n if n else None"),
    "min": ("acc = None", "if acc is None or {t} < acc: acc = {t}", "return acc"),
    "max": ("acc = None", "if acc is None or {t} > acc: acc = {t}", "return acc"),
}


class _Source:
    """Python source of plans (plan.py): registers are r0, r1, ..., tuple
    slots t0, t1, ...; a failed test `continue`s the innermost loop."""

    def __init__(self, ns: Namespace, plan: P.ClausePlan, rule_of):
        self.ns, self.plan, self.rule_of = ns, plan, rule_of
        self.defs: list[str] = []          # functions of aggregates

    def value(self, v) -> str:
        if isinstance(v, P.Reg):
            return f"r{v.n}"
        if isinstance(v, P.Const):
            return repr(v.value)
        args = [self.value(a) for a in v.args]
        op = v.op
        if op in _FORMAT:
            return _FORMAT[op].format(*args)
        if op in ("min", "max"):
            return f"{op}({', '.join(args)})"
        if op == "cat":
            return "(" + " + ".join(args) + ")"
        raise P.Unsupported(f"functor {op}")

    def test(self, t: P.Test) -> str:
        """A Test as a Python condition."""
        a, b = self.value(t.left), self.value(t.right)
        if t.op == "match":
            return f"{'not ' if t.negated else ''}_match({a}, {b})"
        if t.op == "contains":
            return f"({a} {'not in' if t.negated else 'in'} {b})"
        return f"({a} {_COMPARE[t.op]} {b})"

    def simple_line(self, x) -> str:
        """The line of an Assign, a Test or an Either (also in a Branch's options)."""
        if isinstance(x, P.Assign):
            return f"r{x.reg} = {self.value(x.value)}"
        return f"if not {self.either(x) if isinstance(x, P.Either) else self.test(x)}: continue"

    def either(self, e: P.Either) -> str:
        """An Either as a Python condition."""
        return "(" + " or ".join("(" + " and ".join(self.test(t) for t in option) + ")" for option in e.options) + ")"

    def _key(self, values) -> str:
        vals = [self.value(v) for v in values]
        return vals[0] if len(vals) == 1 else "(" + ", ".join(vals) + ",)"

    def lines(self, steps, depth: int) -> list[str]:
        """The lines of `steps`, the first at `depth` (each loop one deeper)."""
        out = [("    " * depth) + "for _once in (None,):"]   # (so that a failed test can `continue`)
        depth += 1
        for s in steps:
            pad = "    " * depth
            if isinstance(s, P.Check):
                out.append(f"{pad}if t{s.t}[{s.col}] != {self.value(s.value)}: continue")
            elif isinstance(s, P.Scan):
                name = self.ns.index(s.relation, ())
                out.append(f"{pad}for t{s.t} in {name}:")
                depth += 1
            elif isinstance(s, P.Lookup):
                name = self.ns.index(s.relation, s.key)
                out.append(f"{pad}for t{s.t} in {name}.get({self._key(s.values)}, ()):")
                depth += 1
            elif isinstance(s, P.Bind):
                out.append(f"{pad}r{s.reg} = t{s.t}[{s.col}]")
            elif isinstance(s, (P.Assign, P.Test, P.Either)):
                out.append(pad + self.simple_line(s))
            elif isinstance(s, P.Branch):
                # (a loop over the options: a failed test goes on to the next)
                b = f"_b{len(out)}"
                out.append(f"{pad}for {b} in range({len(s.options)}):")
                for k, option in enumerate(s.options):
                    out.append(f"{pad}    {'elif' if k else 'if'} {b} == {k}:")
                    out += [f"{pad}        {self.simple_line(x)}" for x in option]
                depth += 1
            elif isinstance(s, P.Absent):
                name = self.ns.index(s.relation, s.key, negated=True)
                out.append(f"{pad}if {self._key(s.values)} in {name}: continue" if s.key
                           else f"{pad}if {name}: continue")
            elif isinstance(s, P.Distinct):
                out.append(f"{pad}if t{s.t} == _d: continue")
            elif isinstance(s, P.Fail):
                out.append(f"{pad}continue")
            elif isinstance(s, P.Aggregate):
                out.append(f"{pad}r{s.reg} = {self.aggregate(s)}")
                if s.op in ("min", "max", "mean"):
                    out.append(f"{pad}if r{s.reg} is None: continue")
            elif isinstance(s, P.Emit):
                head = "(" + ", ".join(self.value(v) for v in s.values) + ",)" if s.values else "()"
                out.append(f"{pad}E({s.relation}, {head}, {self.rule_of(s.clause)})")
            elif isinstance(s, P.Holds):
                out.append(f"{pad}return True")
            elif isinstance(s, _Accumulate):
                out.append(pad + s.text.format(t=self.value(s.target) if s.target is not None else ""))
            else:
                raise P.Unsupported(f"step {s!r}")
        return out

    def aggregate(self, agg: P.Aggregate) -> str:
        """Call of a function computing the aggregate over its steps, given
        its inputs; None (no result) skips the solution."""
        if agg.op not in _AGGREGATE:
            raise P.Unsupported(f"aggregate {agg.op}")
        fn = self.ns.fresh_function()
        init, step, fin = _AGGREGATE[agg.op]
        body = self.lines(agg.steps + (_Accumulate(step, agg.target),), 1)
        params = ", ".join(f"r{n}" for n in agg.inputs)
        self.defs.append("\n".join([f"def {fn}({params}):", f"    {init}"] + body + [f"    {fin}"]))
        return f"{fn}({params})"


class _Accumulate:
    """(The last step of an aggregate's body in Python: fold the target into acc.)"""

    def __init__(self, text: str, target):
        self.text, self.target = text, target


def _rules_name(plans, rule_of) -> str:
    """`<rule N>` / `<rules N M>`: the engine's ids of the rules the code runs
    (runtime_errors.py finds the rule of an error by it)."""
    ids = [str(rule_of(p.steps[-1].clause)) for p in plans if isinstance(p.steps[-1], P.Emit)]
    return f"<rule {ids[0]}>" if len(ids) == 1 else f"<rules {' '.join(ids)}>"


def _function(ns: Namespace, plans, head: str, depth: int, rule_of=None, tail: str = "", name: str | None = None):
    """f: `head`, the delta tuple `_d` unpacked into registers r0, r1, ...
    (a plan with one), the lines of `plans` run one after the other at
    `depth`, `tail`; rule_of(clause index): the rule id its Emit passes
    (default: the index)."""
    rule_of = rule_of or (lambda clause: clause)
    lines, defs = [], []
    for plan in plans:
        src = _Source(ns, plan, rule_of)
        try:
            lines += src.lines(plan.steps, depth)
        except P.Unsupported as e:
            raise error(plan.loc, f"cannot compile this rule: {e}") from None
        defs += src.defs
    arity = plans[0].arity
    unpack = "    " * depth + "".join(f"r{i}, " for i in range(arity)) + "= _d\n" if arity else ""
    local: dict = {}
    from sdylog.datalog.cache import CODES
    exec(CODES.compile("\n\n".join(defs + [head + unpack + "\n".join(lines) + "\n" + tail]),
                       name or _rules_name(plans, rule_of)), ns.globals, local)
    for key, obj in local.items():   # aggregate functions are called by name
        if key != "f":
            ns.globals[key] = obj
    return local["f"]


def clause_function(ns: Namespace, plan: P.ClausePlan, rule_of=None):
    """f(E) running a plan with no delta: E(relation, tuple, rule) per solution."""
    return _function(ns, [plan], "def f(E):\n", 1, rule_of)


def delta_function(ns: Namespace, plans, rule_of=None):
    """One function f(delta, E) running plans that read the same delta
    relation: each delta tuple goes through every plan in turn (one call and
    one pass over the delta, whatever the number of clauses)."""
    return _function(ns, plans, "def f(delta, E):\n    for _d in delta:\n", 2, rule_of)


def domination_function(ns: Namespace, plans):
    """One function f(tuple) -> bool: does some plan reach Holds for it."""
    return _function(ns, plans, "def f(_d):\n", 1, tail="    return False\n", name="<subsumption>")


def compile_clause(ns: Namespace, body, head_exprs, head_rel: int, rule: int, kinds: dict | None = None):
    """A function f(delta, E) for one clause whose first atom is the delta:
    it emits head tuples, calling E(head_rel, tuple, rule). (Planned without
    sizes: explain.py runs it for one tuple at a time.)"""
    plan = P.plan_clause(P.Context(size=lambda rel: None), body, head_exprs, head_rel, rule, kinds, delta=0,
                         arity=len(body[0].args))
    return delta_function(ns, [plan])
