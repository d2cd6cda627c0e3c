"""The parsed program: declarations, directives and clauses (dataclasses)."""
from __future__ import annotations

from dataclasses import dataclass, field

from sdylog.datalog.lexer import Loc

# Base kinds of values; every declared type reduces to one of them.
NUMBER, UNSIGNED, FLOAT, SYMBOL = "number", "unsigned", "float", "symbol"
KINDS = (NUMBER, UNSIGNED, FLOAT, SYMBOL)
NUMERIC = (NUMBER, UNSIGNED, FLOAT)


# ---- expressions (arguments of atoms, functors, constraints) ----

@dataclass(frozen=True)
class Var:
    name: str
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Wildcard:
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class NumberLit:
    value: int | float
    kind: str | None   # None: an integer literal usable as number, unsigned or float
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class StringLit:
    value: str
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Functor:
    """An operator or built-in functor: op is a key of INFIX, PREFIX or NAMED (below)."""
    op: str
    args: tuple
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Aggregate:
    op: str                # count, sum, min, max, mean
    target: object | None  # the aggregated expression (None for count)
    body: tuple            # literals
    loc: Loc = field(compare=False)


# ---- literals (body elements) ----

@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Negation:
    atom: Atom
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Comparison:
    op: str    # '=', '!=', '<', '<=', '>', '>=', 'match', 'contains'
    left: object
    right: object
    loc: Loc = field(compare=False)
    negated: bool = False   # only for match/contains written under '!'


@dataclass(frozen=True)
class AnyOf:
    """A disjunction of conjunctions of comparisons, `(a < b ; a = b, c <= d)`,
    kept as one test of the clause (a disjunction that binds a variable is
    split into clauses instead: semantics.split_binding_disjunctions)."""
    options: tuple   # of tuples of Comparison
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class BoolLit:
    value: bool
    loc: Loc = field(compare=False)


@dataclass(frozen=True)
class Clause:
    """One head, one conjunctive body (rules with several heads or with
    disjunctions are split into clauses as Soufflé does). A fact has no body."""
    head: Atom
    body: tuple
    loc: Loc                  # the rule as written (its first head)
    rule_index: int           # which written rule it came from


@dataclass(frozen=True)
class Subsumption:
    """Soufflé's subsumptive rule `dominated <= dominating :- body.`: a tuple of
    the relation matching `dominated` is dropped when another tuple matching
    `dominating` exists for which the body holds. Both atoms name one relation."""
    dominated: Atom
    dominating: Atom
    body: tuple
    loc: Loc
    rule_index: int

    @property
    def relation(self) -> str:
        return self.dominated.relation

    def as_clause(self) -> Clause:
        """The rule as a clause over both atoms (for checks and compilation):
        head = the dominated atom, body = both atoms and the conditions."""
        return Clause(self.dominated, (self.dominated, self.dominating) + tuple(self.body), self.loc,
                      self.rule_index)


# ---- declarations ----

@dataclass(frozen=True)
class Column:
    name: str
    type_name: str
    kind: str


@dataclass
class RelationDecl:
    name: str
    columns: tuple[Column, ...]
    loc: Loc

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(c.kind for c in self.columns)

    def __reduce__(self):
        # (unpickled by __init__, not by restoring its __dict__ item by item: a
        # saved program holds hundreds of declarations, cache.py; 2% of a first run)
        return RelationDecl, (self.name, self.columns, self.loc)


@dataclass
class TypeDecl:
    name: str
    kind: str
    bases: tuple[str, ...]   # `<: base` (subset) or `= A | B` (union or alias)
    subset: bool
    loc: Loc


@dataclass
class IODirective:
    kind: str          # 'input', 'output', 'printsize'
    relation: str
    params: dict[str, str]
    loc: Loc


# ---- operators used by the printer and the checks ----

# Binary operators and their precedence (Soufflé's: higher binds tighter; '^'
# is right-associative and binds tighter than the prefix operators).
INFIX = {"lor": 1, "lxor": 2, "land": 3, "bor": 4, "bxor": 5, "band": 6,
         "bshl": 7, "bshr": 7, "bshru": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9, "^": 11}
PREFIX_PRECEDENCE = 10
PREFIX = {"neg": "-", "bnot": "bnot ", "lnot": "lnot "}
NAMED = {"min", "max", "cat", "strlen", "substr", "to_number", "to_string", "to_float",
         "to_unsigned"}


# The fields of each kind of node that hold other nodes, in source order.
_CHILDREN = {Var: (), Wildcard: (), NumberLit: (), StringLit: (), BoolLit: (), Functor: ("args",),
             Aggregate: ("target", "body"), Atom: ("args",), Negation: ("atom",), Comparison: ("left", "right"),
             AnyOf: ("options",), Clause: ("head", "body"), Subsumption: ("dominated", "dominating", "body")}


def nodes(root, into_aggregates: bool = True):
    """Every node of a rule below and including `root` (a node, or a list or
    tuple of them), depth first in source order; with `into_aggregates`
    False, not what an aggregate holds."""
    stack = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
            continue
        fields = _CHILDREN.get(type(x))
        if fields is None:
            continue
        yield x
        if into_aggregates or type(x) is not Aggregate:
            for f in reversed(fields):
                stack.append(getattr(x, f))


def variables(root, into_aggregates: bool = True) -> list[Var]:
    """Every variable occurrence in `root` (as nodes walks it)."""
    return [x for x in nodes(root, into_aggregates) if isinstance(x, Var)]
