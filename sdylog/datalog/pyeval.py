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

from sdylog.datalog.ast import (Aggregate, Atom, BoolLit, Comparison, Functor, Negation, NumberLit, StringLit,
                                Var, Wildcard)
from sdylog.datalog.lexer import error
from sdylog.datalog.semantics import injected


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
    if b == 0:
        raise error(None, "division by zero")
    return a - b * _div(a, b)


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


def _to_string(x):
    return format(x, "g") if isinstance(x, float) else str(x)


HELPERS = {"_div": _div, "_mod": _mod, "_substr": _substr, "_match": _match, "_to_number": _to_number,
           "_to_string": _to_string, "math": math}

_BINARY = {"+": "({} + {})", "-": "({} - {})", "*": "({} * {})", "/": "_div({}, {})", "%": "_mod({}, {})",
           "^": "({} ** {})", "band": "({} & {})", "bor": "({} | {})", "bxor": "({} ^ {})",
           "bshl": "({} << {})", "bshr": "({} >> {})", "bshru": "(({} % (1 << 64)) >> {})",
           "land": "int(bool({}) and bool({}))", "lor": "int(bool({}) or bool({}))",
           "lxor": "int(bool({}) != bool({}))"}
_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class Unsupported(Exception):
    pass


class Namespace:
    """Names the indexes compiled code reads; the evaluator binds them."""

    def __init__(self):
        self.globals: dict = dict(HELPERS)
        self.specs: dict[str, tuple] = {}   # name -> (relation, key positions, negated)
        self._agg = 0

    def index(self, rel: str, key: tuple, negated: bool = False) -> str:
        name = f"{'N' if negated else 'I'}_{rel}_{'_'.join(map(str, key)) or 'all'}"
        self.specs[name] = (rel, key, negated)
        return name

    def fresh_function(self) -> str:
        self._agg += 1
        return f"_agg{self._agg}"


class BodyCompiler:
    """Python source for one clause body; see the module docstring."""

    def __init__(self, ns: Namespace, items, sizes=None, live: set[str] = frozenset(),
                 outer: set[str] = frozenset(), kinds: dict | None = None, lazy: bool = False,
                 fanout=None, indexes=None, live_key=None):
        self.ns = ns
        self.fanout = fanout  # (relation, key positions) -> tuples per key (join order), when known
        self.lazy = lazy     # fetch indexes where first needed (a body run once, maybe never reaching them)
        self.lazy_names: set[str] = set()
        self.kinds = kinds   # variable -> kind; None: unknown (no integer-only shortcuts)
        self.items = list(items)          # everything of the clause (for aggregates' injected variables)
        self.sizes = sizes or {}          # relation -> tuple count (join order)
        self.live = live                  # relations of the stratum being computed
        self.outer = set(outer)           # variables bound outside (aggregate bodies)
        self.lines: list[str] = []
        self.bound: set[str] = set(outer)
        self.depth = 1
        self.tmp = 0
        self.deferred: list[Comparison] = []
        self.extra_defs: list[str] = []   # functions of aggregates
        self.delta_var: str | None = None  # the delta tuple is this variable, its columns _c0, _c1, ...
        self.alias: dict[str, str] = {}    # variable -> the name holding it (a delta column)
        self.indexes = indexes             # (relation, bound columns) -> the columns of the index to use
        self.live_key = live_key           # the same for the relations of the stratum (indexes kept up to date)
        self.base_depth = 1                # depth of the clause's first line
        self.delta_lookups: list[str] = []  # index lookups whose key is made of the delta tuple's columns
        self.delta_index: int | None = None  # the delta atom's position in the body
        self.distinct_from: int | None = None  # body atom whose tuples must differ from the delta one

    # ---- output ----
    def line(self, text: str):
        self.lines.append("    " * self.depth + text)

    def var(self, name: str) -> str:
        return self.alias.get(name) or f"v_{name}"

    # ---- expressions ----
    def can_compute(self, e) -> bool:
        if isinstance(e, Var):
            return e.name in self.bound
        if isinstance(e, (NumberLit, StringLit)):
            return True
        if isinstance(e, Functor):
            return all(self.can_compute(a) for a in e.args)
        if isinstance(e, Aggregate):
            return all(n in self.bound for n in injected(e, self.items, self.outer))
        return False

    def expr(self, e) -> str:
        if isinstance(e, Var):
            if e.name not in self.bound:
                raise Unsupported(f"variable {e.name} used before it is bound")
            return self.var(e.name)
        if isinstance(e, NumberLit):
            return repr(float(e.value)) if e.kind == "float" else repr(e.value)
        if isinstance(e, StringLit):
            return repr(e.value)
        if isinstance(e, Functor):
            args = [self.expr(a) for a in e.args]
            op = e.op
            if op in ("/", "%") and all(self._integer(a) for a in e.args):
                # Soufflé truncates toward zero: Python's floor division agrees for
                # non-negative operands, the common case, without a call
                a, b = args
                py = "//" if op == "/" else "%"
                slow = "_div" if op == "/" else "_mod"
                d = e.args[1]
                if isinstance(d, NumberLit) and d.value > 0:
                    return f"({a} {py} {b} if {a} >= 0 else {slow}({a}, {b}))"
                return f"({a} {py} {b} if {a} >= 0 and {b} > 0 else {slow}({a}, {b}))"
            if op in _BINARY:
                return _BINARY[op].format(*args)
            simple = {"neg": "(-{})", "bnot": "(~{})", "lnot": "int(not {})", "strlen": "len({})",
                      "to_string": "_to_string({})", "to_number": "_to_number({})",
                      "to_float": "float({})", "to_unsigned": "int({})"}
            if op in simple:
                return simple[op].format(args[0])
            if op in ("min", "max"):
                if len(args) == 2 and all(isinstance(x, (Var, NumberLit)) for x in e.args):
                    # two names or numbers: a test, not a call (as Python's min/max, the first on ties)
                    a, b = args
                    return f"({a} if {a} {'>=' if op == 'max' else '<='} {b} else {b})"
                return f"{op}({', '.join(args)})"
            if op == "cat":
                return "(" + " + ".join(args) + ")"
            if op == "substr":
                return f"_substr({args[0]}, {args[1]}, {args[2]})"
            raise Unsupported(f"functor {op}")
        if isinstance(e, Aggregate):
            return self.aggregate(e)
        raise Unsupported(f"expression {e!r}")

    def _integer(self, e) -> bool:
        """An expression known to hold an integer (no float anywhere in it)."""
        if isinstance(e, NumberLit):
            return e.kind != "float" and isinstance(e.value, int)
        if isinstance(e, Var) and self.kinds is not None:
            return self.kinds.get(e.name) in ("number", "unsigned")
        if isinstance(e, Functor) and e.op in ("+", "-", "*", "/", "%", "min", "max", "neg"):
            return all(self._integer(a) for a in e.args)
        return False

    def aggregate(self, agg: Aggregate) -> str:
        """Call of a function computing the aggregate over its body, given the
        injected variables; None (no result) skips the solution."""
        names = sorted(injected(agg, self.items, self.outer))
        fn = self.ns.fresh_function()
        sub = BodyCompiler(self.ns, list(agg.body) + ([agg.target] if agg.target is not None else []),
                           self.sizes, self.live, set(names), self.kinds, self.lazy, self.fanout, self.indexes)
        sub.base_depth = -1   # (its loops run once per call: no scan for a constant key)
        if agg.op == "count":
            init, step, fin = "acc = 0", "acc += 1", "return acc"
        elif agg.op == "sum":
            init, step, fin = "acc = 0", "acc += {t}", "return acc"
        elif agg.op == "mean":
            init, step, fin = "acc = 0; n = 0", "acc += {t}; n += 1", "return acc / n if n else None"
        elif agg.op in ("min", "max"):
            cmp = "<" if agg.op == "min" else ">"
            init = "acc = None"
            step = "if acc is None or {t} " + cmp + " acc: acc = {t}"
            fin = "return acc"
        else:
            raise Unsupported(f"aggregate {agg.op}")
        body_lines = sub.compile_body(agg.body, None, lambda c: [
            step.format(t=c.expr(agg.target)) if agg.target is not None else step])
        params = ", ".join(sub.var(n) for n in names)
        decl = [f"    global {', '.join(sorted(sub.lazy_names))}"] if sub.lazy_names else []
        src = [f"def {fn}({params}):"] + decl + [f"    {init}"] + body_lines + [f"    {fin}"]
        self.extra_defs.extend(sub.extra_defs)
        self.extra_defs.append("\n".join(src))
        self.tmp += 1
        tmp = f"_a{self.tmp}"
        self.line(f"{self.var(tmp)} = {fn}({', '.join(self.var(n) for n in names)})")
        if agg.op in ("min", "max", "mean"):
            self.line(f"if {self.var(tmp)} is None: continue")
        self.bound.add(tmp)
        return self.var(tmp)

    # ---- emission (this class: Python source; native_plan.NativeCompiler: instructions) ----
    def emit_begin(self):
        """Start of a clause body (a failed test before any loop ends it)."""
        self.line("for _once in (None,):")   # so that a failed test can `continue` before any loop

    def emit_loop(self, tvar: str, atom: Atom, source: str, key_pos: list[int], key_vals: list):
        """Loop `tvar` over index `source` of atom's relation, looked up by
        the values key_vals of its columns key_pos (none: a scan)."""
        self._fetch(source, atom.relation)
        if key_pos:
            key = key_vals[0] if len(key_pos) == 1 else "(" + ", ".join(key_vals) + ",)"
            lookup = f"{source}.get({key}, ())"
            if all(self._of_delta(atom.args[i]) for i in key_pos):
                self.delta_lookups.append(lookup)
            self.line(f"for {tvar} in {lookup}:")
        else:
            self.line(f"for {tvar} in {source}:")

    def emit_delta_loop(self, tvar: str):
        self.line(f"for {tvar} in delta:")

    def column(self, tvar: str, i: int, cols: bool):
        """Column i of the tuple `tvar` (with `cols`: of the grouped delta tuple)."""
        return f"_c{i}" if cols else f"{tvar}[{i}]"

    def emit_bind(self, name: str, tvar: str, i: int):
        self.line(f"{self.var(name)} = {tvar}[{i}]")

    def emit_checks(self, tvar: str, conds: list, cols: bool):
        """Skip the tuple unless column i holds value, for each (i, value)."""
        self.line(f"if {' or '.join(f'{self.column(tvar, i, cols)} != {v}' for i, v in conds)}: continue")

    def emit_distinct(self, tvar: str):
        self.line(f"if {tvar} == {self.delta_var or f't{self.delta_index}'}: continue")

    def emit_solve(self, name: str, value, inverse: str, c):
        self.line(f"{self.var(name)} = {value} {inverse} {self.expr(c)}")

    def emit_negation(self, name: str, relation: str, vals: list):
        self._fetch(name, relation)
        if not vals:
            self.line(f"if {name}: continue")
            return
        key = vals[0] if len(vals) == 1 else "(" + ", ".join(vals) + ",)"
        self.line(f"if {key} in {name}: continue")

    def emit_assign(self, name: str, value):
        self.line(f"{self.var(name)} = {value}")

    def emit_fail(self):
        self.line("continue")

    def match_lines(self, head_exprs, head_rel, rule: int, add: bool) -> list[str]:
        """What runs for each solution: emit the head tuple, or (head_rel
        None) answer True."""
        if head_rel is None:
            return ["return True"]
        head = "(" + ", ".join(self.expr(e) for e in head_exprs) + ",)" if head_exprs else "()"
        return [f"E({head})" if add else f"E({head_rel}, {head}, {rule})"]

    # ---- literals ----
    def atom_step(self, atom: Atom, tvar: str, delta: bool):
        key_pos, key_vals = [], []
        if not delta:
            for i, a in enumerate(atom.args):
                if isinstance(a, Wildcard) or (isinstance(a, Var) and a.name not in self.bound):
                    continue
                if self.can_compute(a):
                    key_pos.append(i)
                    key_vals.append(self.expr(a))
            used = self._index_key(atom, key_pos)
            if used != key_pos:
                # the other bound columns are tested on each tuple the index gives
                key_vals = [x for i, x in zip(key_pos, key_vals) if i in used]
                key_pos = used
            source = self.ns.index(atom.relation, tuple(key_pos))
            self.emit_loop(tvar, atom, source, key_pos, key_vals)
        elif self.delta_var is not None:
            # grouped with other clauses reading the same delta tuple, unpacked
            # once into _c0, _c1, ...: no loop and no extraction of its own
            self.depth -= 1
        else:
            self.emit_delta_loop(tvar)
        self.depth += 1
        cols = delta and self.delta_var is not None
        conds = []
        for i, a in enumerate(atom.args):
            if i in key_pos or isinstance(a, Wildcard):
                continue
            if isinstance(a, Var) and a.name not in self.bound:
                if cols:
                    self.alias[a.name] = f"_c{i}"
                else:
                    self.emit_bind(a.name, tvar, i)
                self.bound.add(a.name)
                continue
            if not self.can_compute(a) and self._solve(a, tvar, i, cols):
                continue
            if not self.can_compute(a):
                # an expression of variables bound later: checked once they are
                self.tmp += 1
                name = f"_arg{self.tmp}"
                if cols:
                    self.alias[name] = f"_c{i}"
                else:
                    self.emit_bind(name, tvar, i)
                self.bound.add(name)
                self.deferred.append(Comparison("=", Var(name, a.loc), a, a.loc))
                continue
            conds.append((i, self.expr(a)))
        if conds:
            self.emit_checks(tvar, conds, cols)
        if self.distinct_from is not None and tvar == f"t{self.distinct_from}":
            # the dominating atom is looped over after the delta; skip the delta tuple itself
            self.emit_distinct(tvar)

    def _index_key(self, atom: Atom, key_pos: list[int]) -> list[int]:
        """The columns to look `atom` up by: the bound ones, or fewer.
        Building an index costs a pass over the relation: a lookup whose
        only key is constants at the outermost loop (run once) scans
        instead; `indexes(relation, key)` (when given) may choose fewer
        columns (an index that serves other lookups too)."""
        if not key_pos:
            return key_pos
        if atom.relation in self.live:
            return list(self.live_key(atom.relation, tuple(key_pos))) if self.live_key else key_pos
        if self.depth <= self.base_depth + 1 and all(
                isinstance(atom.args[i], (NumberLit, StringLit)) for i in key_pos):
            return []
        if self.indexes is None or len(key_pos) < 2:
            return key_pos
        return list(self.indexes(atom.relation, tuple(key_pos)))

    def _of_delta(self, e) -> bool:
        """An expression of the grouped delta tuple's columns and constants only."""
        if isinstance(e, Var):
            return self.alias.get(e.name, "").startswith("_c")
        if isinstance(e, (NumberLit, StringLit)):
            return True
        if isinstance(e, Functor):
            return all(self._of_delta(a) for a in e.args)
        return False

    def _solve(self, e, tvar: str, i: int, cols: bool) -> bool:
        """Bind the one unbound variable of an integer argument `x + c`,
        `c + x` or `x - c` (c computable) from the column's value: the
        variable is known at once (an index key for what follows) instead
        of checked later."""
        if not (isinstance(e, Functor) and e.op in ("+", "-") and len(e.args) == 2):
            return False
        x, c = e.args
        if e.op == "+" and not (isinstance(x, Var) and x.name not in self.bound):
            x, c = c, x
        if not (isinstance(x, Var) and x.name not in self.bound and self.can_compute(c)):
            return False
        if not (self._integer(x) and self._integer(c)):
            return False
        inverse = "-" if e.op == "+" else "+"
        self.emit_solve(x.name, self.column(tvar, i, cols), inverse, c)
        self.bound.add(x.name)
        return True

    def _fetch(self, name: str, relation: str):
        if self.lazy and relation not in self.live:
            self.lazy_names.add(name)
            self.line(f"if {name} is None: {name} = _load_index({name!r})")

    def negation_step(self, neg: Negation):
        atom = neg.atom
        if atom.relation not in self.live and self.sizes.get(atom.relation) == 0:
            return   # nothing to be absent from: always true
        pos = [i for i, a in enumerate(atom.args) if not isinstance(a, Wildcard)]
        vals = [self.expr(atom.args[i]) for i in pos]
        self.emit_negation(self.ns.index(atom.relation, tuple(pos), negated=True), atom.relation, vals)

    def comparison_step(self, c: Comparison):
        a, b = self.expr(c.left), self.expr(c.right)
        if c.op in ("match", "contains"):
            test = f"_match({a}, {b})" if c.op == "match" else f"({a} in {b})"
            self.line(f"if {'' if c.negated else 'not '}{test}: continue")
            return
        self.line(f"if not ({a} {_COMPARE[c.op]} {b}): continue")

    def assignment(self, c: Comparison) -> bool:
        if c.op != "=":
            return False
        for a, b in ((c.left, c.right), (c.right, c.left)):
            if isinstance(a, Var) and a.name not in self.bound and self.can_compute(b):
                self.emit_assign(a.name, self.expr(b))
                self.bound.add(a.name)
                return True
        return False

    def ready(self, lit) -> bool:
        if isinstance(lit, Negation):
            return all(self.can_compute(a) for a in lit.atom.args if not isinstance(a, Wildcard))
        if isinstance(lit, Comparison):
            return self.can_compute(lit.left) and self.can_compute(lit.right)
        return False

    def atom_score(self, a: Atom):
        key = tuple(i for i, x in enumerate(a.args) if not isinstance(x, Wildcard) and self.can_compute(x))
        live = a.relation in self.live
        size = self.sizes.get(a.relation, 1000)
        if self.fanout is not None and key and not live:
            # the fewest tuples per lookup first (known from the index itself: the one it will use)
            if self.indexes is not None and len(key) > 1:
                key = tuple(self.indexes(a.relation, key))
            return (True, True, -self.fanout(a.relation, key), 0)
        # index lookups first (live relations last: they grow), then small scans
        return (bool(key), not live, len(key) - (0 if live else 0.5), -size)

    def compile_body(self, body, delta_index: int | None, on_match) -> list[str]:
        """Lines of the loops over `body` (delta atom first when given);
        on_match(compiler) gives the lines run for each solution."""
        todo = [(i, l) for i, l in enumerate(body)]
        self.emit_begin()
        self.depth += 1
        if delta_index is not None:
            self.delta_index = delta_index
            todo = [(i, l) for i, l in todo if i != delta_index]
            self.atom_step(body[delta_index], f"t{delta_index}", delta=True)
            todo += [(-1, c) for c in self.deferred]
            self.deferred = []
        while todo:
            progress = False
            for k, (i, lit) in enumerate(todo):
                if isinstance(lit, BoolLit):
                    if not lit.value:
                        self.emit_fail()
                elif isinstance(lit, Comparison) and self.assignment(lit):
                    pass
                elif self.ready(lit):
                    if isinstance(lit, Negation):
                        self.negation_step(lit)
                    else:
                        self.comparison_step(lit)
                elif not isinstance(lit, (Atom,)) and not isinstance(lit, (Negation, Comparison)):
                    # an aggregate target expression (aggregate bodies): nothing to do here
                    pass
                else:
                    continue
                todo.pop(k)
                progress = True
                break
            if progress:
                continue
            atoms = [(i, l) for i, l in todo if isinstance(l, Atom) and all(
                isinstance(x, (Var, Wildcard)) or self.can_compute(x) for x in l.args)]
            if not atoms:
                left = [l for _, l in todo if not (isinstance(l, Atom) or isinstance(l, (Negation, Comparison)))]
                if left and len(left) == len(todo):
                    break
                raise Unsupported("no literal can be evaluated next")
            i, a = max(atoms, key=lambda item: self.atom_score(item[1]))
            todo.remove((i, a))
            self.atom_step(a, f"t{i}" if i >= 0 else f"u{len(self.lines)}", delta=False)
            todo += [(-1, c) for c in self.deferred]
            self.deferred = []
        for text in on_match(self):
            self.line(text)
        return self.lines


def _clause_lines(ns: Namespace, body, head_exprs, head_rel: int | None, rule: int,
                  delta_index: int | None, sizes, live, distinct_from: int | None, kinds, lazy, fanout,
                  depth: int = 1, delta_var: str | None = None, indexes=None, add: bool = False,
                  live_key=None, compiler=BodyCompiler):
    """The lines of one clause's loops (and the compiler, for its lazy index
    names and aggregate functions); with another `compiler` (a subclass
    emitting something else), what it emits."""
    items = list(body) + list(head_exprs)
    comp = compiler(ns, items, sizes, live, kinds=kinds, lazy=lazy, fanout=fanout, indexes=indexes,
                    live_key=live_key)
    comp.depth = depth
    # (grouped: the clause runs once per delta tuple, no loop is outermost)
    comp.base_depth = depth if delta_var is None else -10
    comp.delta_var = delta_var
    comp.distinct_from = distinct_from
    try:
        lines = comp.compile_body(list(body), delta_index,
                                  lambda c: c.match_lines(head_exprs, head_rel, rule, add))
    except Unsupported as e:
        raise error(body[0].loc if body else None, f"cannot compile this rule: {e}") from None
    return lines, comp


def _define(ns: Namespace, src: str, name: str):
    local: dict = {}
    from sdylog.datalog.cache import CODES
    exec(CODES.compile(src, name), ns.globals, local)
    for key, obj in local.items():   # aggregate functions are called by name
        if key != "f":
            ns.globals[key] = obj
    return local["f"]


def _unpack(arity: int, depth: int) -> str:
    """The line unpacking a delta tuple `_d` into _c0, _c1, ... (grouped clauses)."""
    if arity == 0:
        return ""
    return "    " * depth + "".join(f"_c{i}, " for i in range(arity)) + "= _d\n"


def compile_clause(ns: Namespace, body, head_exprs, head_rel: int, rule: int,
                   delta_index: int | None, sizes=None, live=frozenset(),
                   kinds: dict | None = None, lazy: bool = False, indexes=None, add: bool = False):
    """A function for one clause: f([delta,] E) emits head tuples, calling
    E(head_rel, tuple, rule), or E(tuple) with `add`. `indexes(relation,
    bound columns)`: the columns of the index a lookup uses (default: all
    the bound ones). (Subsumption tests: compile_domination_test.)"""
    lines, comp = _clause_lines(ns, body, head_exprs, head_rel, rule, delta_index, sizes, live, None,
                                kinds, lazy, None, indexes=indexes, add=add)
    params = "delta, E" if delta_index is not None else "E"
    decl = [f"    global {', '.join(sorted(comp.lazy_names))}"] if comp.lazy_names else []
    src = "\n\n".join(comp.extra_defs + [f"def f({params}):\n" + "\n".join(decl + lines) + "\n"])
    return _define(ns, src, f"<rule {rule}>")


def _shared_lookups(blocks: list[str], lookups: list[str], depth: int) -> list[str]:
    """The lines computing once, before the blocks, the index lookups keyed by
    the delta tuple alone that several of them make (blocks rewritten in place
    to read them). The indexes must not change while the function runs."""
    from collections import Counter
    pre = []
    for n, (lookup, times) in enumerate(sorted((k, v) for k, v in Counter(lookups).items() if v > 1)):
        name = f"_l{n}"
        pre.append("    " * depth + f"{name} = {lookup}")
        blocks[:] = [b.replace(f" in {lookup}:", f" in {name}:") for b in blocks]
    return pre


def _joined_blocks(compiled, depth: int) -> tuple[list[str], list[str]]:
    """The lines of several clauses run one after the other on the same delta
    tuple (`compiled`: their (lines, compiler)), after the lookups they share
    (_shared_lookups), and the helper functions they define."""
    blocks, defs, lookups = [], [], []
    for lines, comp in compiled:
        blocks += lines
        defs += comp.extra_defs
        lookups += comp.delta_lookups
    return _shared_lookups(blocks, lookups, depth) + blocks, defs


def delta_group_clauses(ns: Namespace, clauses, sizes=None, live=frozenset(), fanout=None, indexes=None,
                        live_key=None, compiler=BodyCompiler) -> list[tuple]:
    """(lines, compiler) of each clause of a delta group (compile_delta_group),
    each planned and emitted by `compiler`."""
    return [_clause_lines(ns, body, head_exprs, head_rel, rule, delta_index, sizes, live, None, kinds, False,
                          fanout, depth=2, delta_var="_d", indexes=indexes, live_key=live_key, compiler=compiler)
            for body, head_exprs, head_rel, rule, delta_index, kinds in clauses]


def domination_clauses(ns: Namespace, tests, live=frozenset(), indexes=None, live_key=None,
                       compiler=BodyCompiler) -> list[tuple]:
    """(lines, compiler) of each test of a domination test (compile_domination_test)."""
    return [_clause_lines(ns, body, (), None, -1, 0, None, live, 1, kinds, False, None,
                          depth=1, delta_var="_d", indexes=indexes, live_key=live_key, compiler=compiler)
            for body, kinds in tests]


def compile_delta_group(ns: Namespace, clauses, sizes=None, live=frozenset(), fanout=None, indexes=None,
                        live_key=None):
    """One function f(delta, E) for several clauses that read the same
    relation: each delta tuple goes through every clause's loops in turn (one
    call and one pass over the delta, whatever the number of clauses).
    `clauses`: (body, head_exprs, head_rel, rule, delta_index, kinds).
    E must not change the indexes the function reads (a lookup that several
    clauses make with the delta tuple's columns is made once per tuple)."""
    compiled = [([f"        # rule {c[3]}"] + lines, comp) for c, (lines, comp) in zip(
        clauses, delta_group_clauses(ns, clauses, sizes, live, fanout, indexes, live_key))]
    blocks, defs = _joined_blocks(compiled, 2)
    body, delta_index = clauses[0][0], clauses[0][4]
    unpack = _unpack(len(body[delta_index].args), 2)
    src = "\n\n".join(defs + ["def f(delta, E):\n    for _d in delta:\n" + unpack + "\n".join(blocks) + "\n"])
    return _define(ns, src, "<rules " + " ".join(str(c[3]) for c in clauses) + ">")


def compile_domination_test(ns: Namespace, tests, live=frozenset(), indexes=None, live_key=None):
    """One function f(tuple) -> bool: does some subsumptive rule of the
    relation dominate the tuple (another tuple of it, body atom 1, with the
    rule's conditions)? `tests`: (body, kinds) with the dominated atom at 0."""
    blocks, defs = _joined_blocks(domination_clauses(ns, tests, live, indexes, live_key), 1)
    unpack = _unpack(len(tests[0][0][0].args), 1)
    src = "\n\n".join(defs + ["def f(_d):\n" + unpack + "\n".join(blocks) + "\n    return False\n"])
    return _define(ns, src, "<subsumption>")
