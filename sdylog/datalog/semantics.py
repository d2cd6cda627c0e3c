"""Checks Soufflé makes before running a program: declared relations, arities,
grounded variables, wildcards only in atoms, and value kinds (number, unsigned,
float, symbol) of every variable and expression."""
from __future__ import annotations

from sdylog.datalog.ast import (FLOAT, INFIX, NUMBER, NUMERIC, SYMBOL, UNSIGNED, Aggregate, AnyOf, Atom,
                                Clause, Comparison, Functor, Negation, NumberLit, RelationDecl, StringLit, Var,
                                Wildcard, nodes, variables)
from sdylog.datalog.lexer import error

FLEX = "integer literal"   # an integer literal: number, unsigned or float as context asks
# The kind of what a functor of fixed result gives, whatever its arguments.
_RESULT = {"cat": SYMBOL, "substr": SYMBOL, "strlen": NUMBER, "to_number": NUMBER, "to_string": SYMBOL,
           "to_float": FLOAT, "to_unsigned": UNSIGNED}


def atoms_of(literals):
    """(atom, negative?) of every atom in literals, aggregate bodies included
    (an aggregate's atoms count as negative dependencies: they must be complete)."""
    for lit in literals:
        if isinstance(lit, Atom):
            yield lit, False
        elif isinstance(lit, Negation):
            yield lit.atom, True
        for agg in aggregates_in(literal_exprs(lit)):
            for x in nodes(agg):
                if isinstance(x, Atom):
                    yield x, True


def aggregates_in(exprs) -> list[Aggregate]:
    """Aggregates directly in expressions (not those nested in aggregate bodies)."""
    return [x for x in nodes(exprs, into_aggregates=False) if isinstance(x, Aggregate)]


def literal_exprs(lit) -> tuple:
    if isinstance(lit, Atom):
        return lit.args
    if isinstance(lit, Negation):
        return lit.atom.args
    if isinstance(lit, Comparison):
        return (lit.left, lit.right)
    if isinstance(lit, AnyOf):
        return tuple(e for c in nodes(lit.options) if isinstance(c, Comparison) for e in (c.left, c.right))
    return ()


def injected(agg: Aggregate, scope_items, outer: set[str]) -> set[str]:
    """Variables of an aggregate that come from outside it: those occurring in
    the enclosing scope outside every aggregate (or bound further out).
    Sibling aggregates may each use a variable of the same name locally."""
    outside = {v.name for v in variables(scope_items, into_aggregates=False)} | outer
    return {v.name for v in variables(agg)} & outside


def needed(expr, scope_items, outer) -> list[Var]:
    """Variables that must be grounded before expr can be computed."""
    out: list[Var] = []
    for x in nodes(expr, into_aggregates=False):
        if isinstance(x, Var):
            out.append(x)
        elif isinstance(x, Aggregate):
            names = injected(x, scope_items, outer)
            out.extend(v for v in variables(x) if v.name in names)
    return out


def grounded_names(body, items, outer) -> set[str]:
    """The variables a body binds: those of its positive atoms, those set by
    `x = e` once e's are, and those every option of a disjunction binds."""
    grounded = set(outer)
    for lit in body:
        if isinstance(lit, Atom):
            grounded.update(a.name for a in lit.args if isinstance(a, Var))
    changed = True
    while changed:
        changed = False
        for lit in body:
            if isinstance(lit, Comparison) and lit.op == "=":
                for a, b in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(a, Var) and a.name not in grounded and not _has_wildcard(b) \
                            and all(v.name in grounded for v in needed(b, items, outer)):
                        grounded.add(a.name)
                        changed = True
            elif isinstance(lit, AnyOf):
                new = set.intersection(*(grounded_names(o, items, grounded) for o in lit.options)) - grounded
                if new:
                    grounded |= new
                    changed = True
    return grounded


def split_binding_disjunctions(bodies, head, dominating=None) -> list[list]:
    """A rule's bodies as clause bodies: each kept, unless a disjunction of
    comparisons (AnyOf) in it uses a variable that neither the rest of the
    body (and a subsumptive rule's two atoms) nor each of its options binds
    by itself (`(x = 1 ; y = 2)`), or binds one in a disjunction nested in
    an option: then one body per option, as Soufflé splits every
    disjunction. (A disjunction kept that binds, `(p = 0, v = -1 ; p > 0,
    v = v0)`, is one step of its clause: plan.Branch.)"""
    around = [head, dominating] if dominating is not None else []
    return [b for body in bodies for b in _split(list(body), around)]


def _split(body: list, around: list) -> list[list]:
    for k, lit in enumerate(body):
        if isinstance(lit, AnyOf):
            rest = body[:k] + body[k + 1:]
            outside = grounded_names(rest + around, body, set())
            if not all(_binds_all(option, lit, outside, body) for option in lit.options):
                return [b for option in lit.options for b in _split(rest[:k] + list(option) + rest[k:], around)]
    return [body]


def _binds_all(option, lit: AnyOf, outside: set, items) -> bool:
    """Does the option (with `outside` bound) bind every variable of the
    disjunction `lit`, with what it binds set by its own `x = e` only?"""
    used = {v.name for e in literal_exprs(lit) for v in needed(e, items, set())}
    flat = [x for x in option if not isinstance(x, AnyOf)]
    return used <= grounded_names(flat, items, outside)


def check_grounded(body, extra_exprs, outer: set[str], what_extra: str) -> None:
    """Raise for the first ungrounded variable."""
    items = list(body) + list(extra_exprs)
    grounded = grounded_names(body, items, outer)

    def require(expr, where):
        for v in needed(expr, items, outer):
            if v.name not in grounded:
                raise error(v.loc, f"variable '{v.name}' is ungrounded in {where}")

    for e in extra_exprs:
        require(e, what_extra)
    for lit in body:
        where = "an argument of an atom" if isinstance(lit, Atom) else \
            f"the negation of '{lit.atom.relation}'" if isinstance(lit, Negation) else "a constraint"
        for e in literal_exprs(lit):
            require(e, where)
    for agg in aggregates_in([e for lit in body for e in literal_exprs(lit)] + list(extra_exprs)):
        check_grounded(agg.body, [agg.target] if agg.target is not None else [], injected(agg, items, outer),
                       "the aggregated expression")


def _has_wildcard(e) -> bool:
    return any(isinstance(x, Wildcard) for x in nodes(e, into_aggregates=False))


def _check_body_wildcards(body):
    for lit in body:
        in_atom = isinstance(lit, (Atom, Negation))
        for a in literal_exprs(lit):
            if in_atom and isinstance(a, Wildcard):
                continue
            _no_wildcard(a, "an expression" if in_atom else "a constraint")
            for agg in aggregates_in([a]):
                _check_body_wildcards(agg.body)
                if agg.target is not None:
                    _no_wildcard(agg.target, "an aggregated expression")


def _no_wildcard(e, where):
    for x in nodes(e, into_aggregates=False):
        if isinstance(x, Wildcard):
            raise error(x.loc, f"'_' cannot be used in {where}")


def check_declared(atoms, relations: dict[str, RelationDecl]):
    """Every atom names a declared relation, with its number of columns."""
    for atom in atoms:
        decl = relations.get(atom.relation)
        if decl is None:
            raise error(atom.loc, f"relation '{atom.relation}' is not declared")
        if len(atom.args) != decl.arity:
            raise error(atom.loc, f"'{atom.relation}' has {decl.arity} column{'s' if decl.arity != 1 else ''}, "
                        f"used here with {len(atom.args)}")


# ---------------- kinds ----------------

class KindChecker:
    """Infers the kind of each variable of a clause and checks every use."""

    def __init__(self, clause: Clause, relations: dict[str, RelationDecl]):
        self.clause = clause
        self.rels = relations
        self.kinds: dict[str, str] = {}
        self.where: dict[str, object] = {}

    def run(self) -> dict[str, str]:
        atoms = [self.clause.head] + [atom for atom, _ in atoms_of(self.clause.body)]
        for atom in atoms:
            for arg, col in zip(atom.args, self.rels[atom.relation].columns):
                if isinstance(arg, Var):
                    self.bind(arg, col.kind)
        comparisons = [x for x in nodes(self.clause.body) if isinstance(x, Comparison)]
        changed = True
        while changed:
            changed = False
            for c in comparisons:
                for a, b in ((c.left, c.right), (c.right, c.left)):
                    if isinstance(a, Var) and a.name not in self.kinds:
                        k = self.kind(b, soft=True)
                        if k not in (None, FLEX):
                            self.bind(a, k)
                            changed = True
        for c in comparisons:
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if isinstance(a, Var) and a.name not in self.kinds and self.kind(b, soft=True) == FLEX:
                    self.bind(a, NUMBER)
        for atom in atoms:
            for arg, col in zip(atom.args, self.rels[atom.relation].columns):
                if not isinstance(arg, Wildcard):
                    self.expect(arg, col.kind, f"column '{col.name}' of '{atom.relation}'")
        for c in comparisons:
            self.comparison(c)
        return self.kinds

    def bind(self, v: Var, kind: str):
        old = self.kinds.get(v.name)
        if old is None:
            self.kinds[v.name] = kind
            self.where[v.name] = v
        elif old != kind:
            first = self.where[v.name]
            raise error(v.loc, f"variable '{v.name}' is used as {kind} here but as {old} at {first.loc}")

    def comparison(self, c: Comparison):
        if c.op in ("match", "contains"):
            self.expect(c.left, SYMBOL, f"the first argument of '{c.op}'")
            self.expect(c.right, SYMBOL, f"the second argument of '{c.op}'")
            return
        lk, rk = self.kind(c.left), self.kind(c.right)
        if FLEX in (lk, rk):
            other = rk if lk == FLEX else lk
            if other == SYMBOL:
                raise error(c.loc, "cannot compare a number with a symbol")
            return
        if lk != rk:
            raise error(c.loc, f"cannot compare {lk} with {rk}")

    def expect(self, e, kind: str, where: str):
        k = self.kind(e)
        if k == kind or (k == FLEX and kind in NUMERIC):
            return
        raise error(getattr(e, "loc", self.clause.loc),
                    f"{where} is {kind}, given {'a number' if k == FLEX else k}")

    def kind(self, e, soft: bool = False) -> str | None:
        """The kind of an expression (FLEX for integer literals and expressions of them)."""
        if isinstance(e, Var):
            k = self.kinds.get(e.name)
            if k is None and not soft:
                raise error(e.loc, f"cannot tell the type of variable '{e.name}'")
            return k
        if isinstance(e, NumberLit):
            return e.kind or FLEX
        if isinstance(e, StringLit):
            return SYMBOL
        if isinstance(e, Aggregate):
            return self._aggregate(e, soft)
        if isinstance(e, Functor):
            return self._functor(e, soft)
        return None

    def _aggregate(self, a: Aggregate, soft):
        if a.op == "count":
            return NUMBER
        k = self.kind(a.target, soft)
        if k is None:
            return None
        if a.op in ("mean", "sum") and k not in NUMERIC and k != FLEX:
            raise error(a.loc, f"'{a.op}' needs a numeric expression")
        if a.op == "mean":
            return FLOAT
        return NUMBER if k == FLEX else k

    def _functor(self, f: Functor, soft):
        op = f.op
        args = [self.kind(a, soft) for a in f.args]
        if soft and None in args:
            known = [k for k in args if k not in (None, FLEX)]
            if op in INFIX or op in ("neg", "min", "max"):
                return known[0] if known else None
            return _RESULT.get(op)
        if op == "cat":
            for a in f.args:
                self.expect(a, SYMBOL, "an argument of 'cat'")
        elif op == "strlen":
            self.expect(f.args[0], SYMBOL, "the argument of 'strlen'")
        elif op == "substr":
            for a, kind, nth in zip(f.args, (SYMBOL, NUMBER, NUMBER), ("first", "second", "third")):
                self.expect(a, kind, f"the {nth} argument of 'substr'")
        elif op in ("to_string", "to_float", "to_unsigned") and args[0] not in NUMERIC and args[0] != FLEX:
            raise error(f.loc, f"'{op}' needs a number, given {args[0]}")
        if op in _RESULT:
            return _RESULT[op]
        # arithmetic, bitwise, logical, min/max: operands of one kind
        known = {k for k in args if k != FLEX}
        if len(known) > 1:
            raise error(f.loc, f"operands of '{op}' have different types: {', '.join(sorted(known))}")
        k = known.pop() if known else FLEX
        if op in ("min", "max"):
            return k
        if k == SYMBOL:
            raise error(f.loc, f"'{op}' needs numbers, given a symbol")
        if k == FLOAT and op in ("%", "band", "bor", "bxor", "bnot", "bshl", "bshr"):
            raise error(f.loc, f"'{op}' needs integers, given a float")
        return k


def check_clause(clause: Clause, relations: dict[str, RelationDecl], subsumptive: bool = False) -> dict[str, str]:
    """All checks of one clause; returns the kinds of its variables. A
    subsumptive rule `A <= B :- body.` is checked as its as_clause(), `A :-
    A, B, body.`: both atoms bind variables like body atoms, wildcards
    allowed."""
    check_declared([clause.head] + [atom for atom, _ in atoms_of(clause.body)], relations)
    for x in () if subsumptive else nodes(clause.head.args, into_aggregates=False):
        if isinstance(x, Wildcard):
            raise error(x.loc, "'_' cannot be used in the head of a rule")
        if isinstance(x, Aggregate):
            raise error(x.loc, "aggregates are not supported in rule heads; bind one to a variable "
                        "in the body (x = count : { ... })")
    _check_body_wildcards(clause.body)
    check_grounded(clause.body, () if subsumptive else clause.head.args, set(), "the head of a rule")
    return KindChecker(clause, relations).run()
