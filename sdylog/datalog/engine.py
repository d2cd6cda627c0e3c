"""What a run of a program asking for some relations needs: the strata
that derive them, and when the others can be freed."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

from sdylog.datalog.program import Program


def needed_strata(program: Program, relations: list[str] | None):
    if relations is None:
        return program.strata
    key = ("needed", tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _needed_strata(program, relations)
    return program.run_cache[key]


def strata_since(program: Program, relations: list[str] | None, changed) -> list:
    """Of the strata a run asking for `relations` needs (needed_strata),
    those to evaluate again after the input relations `changed` did: the
    strata reading one of them, or what such a stratum derives (kept per
    program)."""
    key = ("since", None if relations is None else tuple(relations), tuple(changed))
    if key not in program.run_cache:
        reads = program.reads
        stale = set(changed)
        again = []
        for s in needed_strata(program, relations):   # (in order: a stratum after those it reads)
            if any(stale.intersection(reads.get(r, ())) for r in s.relations):
                stale.update(s.relations)
                again.append(s)
        program.run_cache[key] = again
    return program.run_cache[key]


def written_by(strata) -> list[str]:
    """The relations the strata derive, stratum by stratum."""
    return [r for s in strata for r in s.relations]


def derived_by(program: Program, relations: list[str] | None, since=None) -> frozenset[str]:
    """The relations the strata of a run derive (needed_strata's, or with
    `since` strata_since's) as a set, kept per program: a run of hundreds
    of strata does not list them again."""
    key = ("derived", None if relations is None else tuple(relations), None if since is None else tuple(since))
    if key not in program.run_cache:
        strata = needed_strata(program, relations) if since is None else strata_since(program, relations, since)
        program.run_cache[key] = frozenset(written_by(strata))
    return program.run_cache[key]


def _needed_strata(program: Program, relations: list[str]):
    for r in relations:
        program.relation(r)   # (every relation asked for must be one of its own: checked once per list)
    reads = program.reads
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
    last toucher is the run's i-th stratum). `kept` is what was asked for.
    The hash sets that deduplicate rows going in can go sooner: `sets[i]`
    once the i-th stratum is done, and `unset_first` before the run (of
    those not asked for: the relations the run reads and does not write,
    and those rank-ordered strata write, which store their result whole).
    The engine reads them a group of strata at a time, as frozensets made
    once per plan (freed_before, freed_after, sets_after), which every run
    of the program asking for the same relations shares: a run's bookkeeping
    is a few set operations, not an entry per relation."""
    kept: tuple[str, ...]
    before: list[str]
    after: list[list[str]]
    sets: list[list[str]]
    derived: frozenset[str]   # the relations of the run's strata
    unset_first: frozenset[str]
    # ("after" or "sets", start, stop) -> those of the strata start..stop-1 as a set (made when first asked)
    _groups: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def freed_before(self) -> frozenset:
        """The relations freed before the run (no stratum of it touches them)."""
        return self._union("before", [self.before], 0, 1)

    def freed_after(self, start: int, stop: int) -> frozenset:
        """The relations freed after the run's strata start..stop-1 ran."""
        return self._union("after", self.after, start, stop)

    def sets_after(self, start: int, stop: int) -> frozenset:
        """The relations whose hash sets go after the strata start..stop-1 ran."""
        return self._union("sets", self.sets, start, stop)

    def _union(self, name: str, per_stratum: list, start: int, stop: int) -> frozenset:
        key = (name, start, stop)
        got = self._groups.get(key)
        if got is None:
            if len(self._groups) >= 64:   # (runs cut into other groups: Python strata, modules of other sizes)
                self._groups.clear()
            got = self._groups[key] = frozenset(chain.from_iterable(per_stratum[start:stop]))
        return got


def drop_plan(program: Program, kept, relations) -> DropPlan:
    """The DropPlan of a run of `program` asked for `kept` (the strata
    needed_strata gives), over the engine's `relations` (every one it holds)."""
    key = ("drop", tuple(kept), tuple(relations))
    if key not in program.run_cache:
        program.run_cache[key] = _drop_plan(program, needed_strata(program, kept), kept, relations)
    return program.run_cache[key]


def _drop_plan(program: Program, strata, kept, relations) -> DropPlan:
    reads = program.reads
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
    derived = frozenset(written_by(strata))
    unwritten = [r for r in relations if r not in keep and r not in derived and r in last]
    sets = [[r for r in s.relations if r not in keep] for s in strata]
    # (a rank-ordered stratum stores its result whole: no set needed)
    unset_first = frozenset(unwritten + [r for s, of in zip(strata, sets) if s.subsumptive for r in of])
    return DropPlan(tuple(kept), before, after, sets, derived, unset_first)
