"""What an engine's runs share whatever evaluates them: the declared
relations, the strata a run asking for some relations needs, and when the
others can be freed."""
from __future__ import annotations

from dataclasses import dataclass

from sdylog.datalog.ast import RelationDecl
from sdylog.datalog.lexer import error
from sdylog.datalog.program import Program


def unknown_relation(relation: str):
    return error(None, f"unknown relation '{relation}'")


class DeclaredRelations:
    """The schema side every engine shares: relation declarations by name,
    and a relation declared again must keep its column types. An engine
    says where it holds them (`_declared`)."""

    def _declared(self, relation: str) -> RelationDecl | None:
        raise NotImplementedError

    def _declared_again(self, decl: RelationDecl) -> bool:
        """Whether DECL's relation is already held (an error if with other column types)."""
        have = self._declared(decl.name)
        if have is None:
            return False
        if have.kinds != decl.kinds:
            raise error(decl.loc, f"relation '{decl.name}' is declared with column types "
                        f"({', '.join(decl.kinds)}) but the database holds it with "
                        f"({', '.join(have.kinds)})")
        return True

    def decl(self, relation: str) -> RelationDecl:
        d = self._declared(relation)
        if d is None:
            raise unknown_relation(relation)
        return d

    def column_names(self, relation: str) -> list[str]:
        return [c.name for c in self.decl(relation).columns]

    def _program_to_run(self, program, relations: list[str] | None):
        """The program a run evaluates (default: the engine's), its relations
        declared here; every relation asked for must be one of its own."""
        program = program or self.program
        if program is None:
            raise error(None, "no program to run")
        self.declare(program)
        for r in relations or ():
            program.relation(r)
        return program


def _reads(program: Program) -> dict[str, set[str]]:
    """Relation -> the relations its clauses and subsumptive rules read
    (made once per program: a run asking for some relations reads it)."""
    cache = program.run_cache
    if "reads" not in cache:
        from sdylog.datalog.semantics import atoms_of
        reads: dict[str, set[str]] = {}
        for c in program.clauses:
            reads.setdefault(c.head.relation, set()).update(a.relation for a, _ in atoms_of(c.body))
        for sub in program.subsumptions:   # (a relation's subsumptive rules read their bodies too)
            reads.setdefault(sub.relation, set()).update(a.relation for a, _ in atoms_of(sub.as_clause().body))
        cache["reads"] = reads
    return cache["reads"]


def needed_strata(program: Program, relations: list[str] | None):
    if relations is None:
        return program.strata
    key = ("needed", tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _needed_strata(program, relations)
    return program.run_cache[key]


def _needed_strata(program: Program, relations: list[str]):
    reads = _reads(program)
    want: set[str] = set()
    todo = list(relations)
    while todo:
        r = todo.pop()
        if r not in want:
            want.add(r)
            todo.extend(reads.get(r, ()))
    return [s for s in program.strata if want & set(s.relations)]


@dataclass
class DropPlan:
    """When a run asked for some relations only (run(relations=...)), the
    others can go as soon as no later stratum of the run reads or writes
    them: `before` (no stratum of the run touches them) and `after[i]` (the
    last toucher is the run's i-th stratum). `kept` is what was asked for."""
    kept: tuple[str, ...]
    before: list[str]
    after: list[list[str]]


def drop_plan(program: Program, strata, kept, relations) -> DropPlan:
    """The DropPlan of a run of `strata` (needed_strata's) asked for `kept`,
    over the engine's `relations` (every one it holds)."""
    key = ("drop", tuple(map(id, strata)), tuple(kept), tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _drop_plan(program, strata, kept, relations)
    return program.run_cache[key]


def _drop_plan(program: Program, strata, kept, relations) -> DropPlan:
    reads = _reads(program)
    last: dict[str, int] = {}
    for i, s in enumerate(strata):
        for r in s.relations:
            last[r] = i
            for q in reads.get(r, ()):
                last[q] = i
    keep = set(kept)
    after: list[list[str]] = [[] for _ in strata]
    before = []
    for r in relations:
        if r in keep:
            continue
        if r in last:
            after[last[r]].append(r)
        else:
            before.append(r)
    return DropPlan(tuple(kept), before, after)
