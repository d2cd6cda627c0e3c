"""Strata: strongly connected components of the relation dependency graph in
evaluation order; negation or aggregation inside a component is an error,
except in a stepped stratum (sdylog/datalog/stepped.py): a recursive
component whose relations all have a Step column."""
from __future__ import annotations

from dataclasses import dataclass

from sdylog.datalog.ast import Clause, Negation
from sdylog.datalog.lexer import error
from sdylog.datalog.semantics import atoms_of


@dataclass
class Stratum:
    relations: tuple[str, ...]     # derived here (in declaration order)
    clauses: tuple[int, ...]       # indices into Program.clauses whose head is here
    recursive: bool                # some clause reads a relation of this stratum
    subsumptive: bool = False      # some relation here has subsumptive rules (evaluated in rank order)
    stepped: bool = False          # evaluated step by step (every relation has a Step column)
    step_plan: object = None       # its StepPlan (stepped.py), made by the program

    def __reduce__(self):
        # (unpickled by __init__, not by restoring its __dict__ item by item, which
        # cost twice as much: a saved program holds hundreds of strata, cache.py)
        return Stratum, (self.relations, self.clauses, self.recursive, self.subsumptive, self.stepped,
                         self.step_plan)


def _components(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components come out dependencies-first
    when edges point from a relation to the relations it reads."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    work: list = []   # (node, its successors not yet looked at)
    out: list[list[str]] = []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(edges.get(node, ())))))

    for root in nodes:
        if root not in index:
            visit(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    visit(nxt)
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = stack[stack.index(node):]
                    del stack[len(stack) - len(comp):]
                    on_stack.difference_update(comp)
                    out.append(comp)
    return out


def stratify(relation_order: list[str], clauses: list[Clause], subsumptions=(),
             stepped_relations=frozenset()) -> tuple[list[Stratum], dict[str, set[str]]]:
    """The strata, and relation -> the relations its clauses and subsumptive
    rules read; `stepped_relations` are those with a Step column."""
    reads: dict[str, set[str]] = {r: set() for r in relation_order}
    # (a subsumption's conditions must be known when it applies)
    for head, body in [(c.head.relation, c.body) for c in clauses] + [(s.relation, s.body) for s in subsumptions]:
        reads[head].update(atom.relation for atom, _ in atoms_of(body))
    subsumed = {s.relation for s in subsumptions}
    position = {r: i for i, r in enumerate(relation_order)}
    comps = _components(relation_order, reads)
    comp_of = {r: i for i, comp in enumerate(comps) for r in comp}
    by_head: dict[str, list[int]] = {}
    for i, c in enumerate(clauses):
        by_head.setdefault(c.head.relation, []).append(i)
    strata = []
    for ci, comp in enumerate(comps):
        rels = sorted(comp, key=position.get)
        idx = sorted(i for r in rels for i in by_head.get(r, ()))
        recursive = any(comp_of[a.relation] == ci for i in idx for a, _ in atoms_of(clauses[i].body))
        stepped = recursive and all(r in stepped_relations for r in comp)
        for i in idx:
            c = clauses[i]
            for atom, negative in atoms_of(c.body):
                if negative and not stepped and comp_of[atom.relation] == ci:
                    negated = any(isinstance(lit, Negation) and lit.atom is atom for lit in c.body)
                    raise error(atom.loc, f"cannot stratify: the rule for '{c.head.relation}' at "
                                f"{c.loc.file}:{c.loc.line} {'negates' if negated else 'aggregates over'} "
                                f"'{atom.relation}', which depends on '{c.head.relation}' (a cycle through "
                                f"{'negation' if negated else 'aggregation'})")
        if idx:
            sub = bool(subsumed & set(rels))
            if stepped and sub:
                raise error(clauses[idx[0]].loc, f"the stepped stratum of {', '.join(rels)} has subsumptive rules: "
                            f"a stratum is evaluated in rank order or step by step, not both")
            strata.append(Stratum(tuple(rels), tuple(idx), recursive, sub, stepped))
    return strata, reads
