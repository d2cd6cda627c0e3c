"""The relations of a memory-engine run held in C, and its plain and
recursive strata evaluated there (sdylog.datalog._native.Database, source in
sdylog/datalog/native/db.c).

Every relation without a float column is a C table of int64 rows; symbols
are interned to ids by the database (one table of strings per engine).
A stratum whose clauses lower (native_plan.py: the plans BodyCompiler makes,
with sizes and index choices read from the C tables) runs in C, its results
written into the stratum's tables; one that does not lower runs in Python on
sets made from the tables (memory_engine.py), its results loaded back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from sdylog.datalog.ast import Atom
from sdylog.datalog.native_plan import CannotLower, IndexSlots, lower_clause, lower_delta_group
from sdylog.datalog.pyeval import Namespace
from sdylog.datalog.ranked import StaticIndexes


class NativeDB:
    """The C tables of an engine's relations (those with no float column)."""

    def __init__(self, native):
        self.db = native.Database()
        self.table: dict[str, int] = {}   # relation -> table number
        self.arity: dict[str, int] = {}
        self.intern = self.db.intern      # str -> symbol id

    def declare(self, decl) -> None:
        if decl.name not in self.table and "float" not in decl.kinds:
            self.table[decl.name] = self.db.add_table(decl.arity, tuple(k == "symbol" for k in decl.kinds))
            self.arity[decl.name] = decl.arity

    def holds(self, relation: str) -> bool:
        return relation in self.table

    def insert(self, relation: str, rows) -> bool:
        """Add rows (tuples of the relation's Python values: int, str for a
        symbol); False, nothing added, when one has no C form (a row of
        another arity, a value of another type, an int beyond 64 bits)."""
        return self.db.insert(self.table[relation], rows)

    def clear(self, relation: str) -> None:
        self.db.clear(self.table[relation])

    def drop_set(self, relation: str) -> None:
        """Free the hash set that deduplicates the relation's rows (no row
        goes in before it is cleared or gets its set again; rows() gives
        them in row order)."""
        self.db.drop_set(self.table[relation])

    def size(self, relation: str) -> int:
        return self.db.size(self.table[relation])

    def rows(self, relation: str) -> set:
        return self.db.rows(self.table[relation])

    def row_matrix(self, relation: str):
        """The rows as an (n, arity) int64 numpy array, symbol columns as
        ids into symbols() (no Python tuple per row)."""
        import numpy as np
        tno = self.table[relation]
        flat = np.frombuffer(self.db.rows_array(tno), dtype=np.int64)
        arity = self.arity[relation]
        return flat.reshape(-1, arity) if arity else np.zeros((self.db.size(tno), 0), np.int64)

    def symbols(self) -> list[str]:
        """Symbol id -> its string."""
        return self.db.symbols()


class NativeIndexes(StaticIndexes):
    """StaticIndexes' answers to the planner (sizes, tuples per key, the
    columns a lookup uses) read from the C tables and their indexes."""

    def __init__(self, ndb: NativeDB):
        super().__init__(None)
        self.ndb = ndb

    def size(self, rel: str) -> int:
        return self.ndb.size(rel)

    def fanout(self, rel: str, key: tuple) -> float:
        size = self.size(rel)
        if not size:
            return 0.0
        fan = size / max(self.ndb.db.index_keys(self.ndb.table[rel], key), 1)
        if key:
            self._fanout.setdefault(rel, {})[key] = fan
        return fan

    def _sample_distinct(self, rel: str, col: int) -> int:
        return self.ndb.db.distinct(self.ndb.table[rel], col, self.SAMPLE)


def run_stratum(ndb: NativeDB, indexes: NativeIndexes, program, stratum) -> int | None:
    """Evaluate a plain or recursive stratum in C into its tables (which hold
    its loaded facts): the rounds it took, or None when it does not lower or
    the run hands back (an overflow, a division by zero; the tables are then
    partly written)."""
    here = list(stratum.relations)
    if not all(ndb.holds(r) for r in here):
        return None
    lowered = PLANS.plan(PlanSources(ndb, indexes), stratum, lambda asked: _lower(asked, program, stratum))
    if lowered is None:
        return None
    base, deltas, specs = lowered
    rid = {r: i for i, r in enumerate(here)}
    result = ndb.db.run([ndb.table[r] for r in here], [(ndb.table[rel], key, rel in rid) for rel, key in specs],
                        base, deltas)
    if result[0] != "ok":
        return None
    for rel, key in specs:   # (what index_key knows of built indexes, as in Python)
        if key and rel not in rid:
            indexes.fanout(rel, key)
    return result[1]


def _lower(asked: _Asked, program, stratum) -> tuple | None:
    """The stratum's programs (base clauses, delta groups, index specs), made
    with what `asked` answers (relations held, sizes, symbol ids, index
    keys); None when a clause does not lower."""
    here = list(stratum.relations)
    rid = {r: i for i, r in enumerate(here)}
    slots = IndexSlots(Namespace())
    plan = dict(symbols=asked.intern, sizes=asked, indexes=asked.index_key)
    base, groups = [], [[] for _ in here]
    try:
        for ci in stratum.clauses:
            c = program.clauses[ci]
            atoms = [lit for lit in c.body if isinstance(lit, Atom)]
            if not all(asked.holds(a.relation) for a in atoms):
                return None
            kinds = program.clause_kinds[ci]
            head = rid[c.head.relation]
            positions = [i for i, lit in enumerate(c.body) if isinstance(lit, Atom) and lit.relation in rid]
            if not positions:
                if any(asked.size(a.relation) == 0 for a in atoms):
                    continue   # an atom of an empty relation: no solution
                base.append(lower_clause(slots, c.body, c.head.args, head, kinds, **plan))
            for p in positions:
                groups[rid[c.body[p].relation]].append((c.body, c.head.args, head, -1, p, kinds))
        arity = [program.relations[r].arity for r in here]
        deltas = [lower_delta_group(slots, g, arity[ri], live=set(here), **plan) if g else []
                  for ri, g in enumerate(groups)]
    except CannotLower:
        return None
    specs = slots.specs()
    if not all(asked.holds(rel) for rel, _ in specs):
        return None
    return base, deltas, specs


@dataclass(frozen=True)
class PlanSources:
    """What planning a stratum reads: the C tables, their indexes, and (a
    rank-ordered stratum's plan names its rules) the engine's rule ids."""
    ndb: NativeDB
    indexes: NativeIndexes
    rule_id: Callable[[int], int] | None = None


# What planning asks: question -> its answer from the sources.
_QUESTIONS = {
    "holds": lambda src, rel: src.ndb.holds(rel),
    "size": lambda src, rel: src.ndb.size(rel),
    "intern": lambda src, symbol: src.ndb.intern(symbol),
    "index_key": lambda src, rel, key: tuple(src.indexes.index_key(rel, key)),
    "fanout": lambda src, rel, key: src.indexes.fanout(rel, key),
    "rule_id": lambda src, ci: src.rule_id(ci),
}


class _Asked:
    """The sources as planning sees them, every question asked and its
    answer logged in order (a read asked again is not logged again). (Also
    the planner's sizes: relation -> tuple count, None when not a C
    relation.)"""

    def __init__(self, sources: PlanSources):
        self.sources, self.log, self.reads = sources, [], {}

    def _ask(self, question: str, *args):
        ask = _QUESTIONS[question]
        answer = ask(self.sources, *args)
        self.log.append((ask, args, answer))
        return answer

    def _read(self, question: str, rel: str):
        """A question of a relation's table, whose answer planning cannot
        change (it writes no table): logged once."""
        key = (question, rel)
        if key not in self.reads:
            self.reads[key] = self._ask(question, rel)
        return self.reads[key]

    def holds(self, rel: str) -> bool:
        return self._read("holds", rel)

    def size(self, rel: str) -> int:
        return self._read("size", rel)

    def get(self, rel: str, default=None):
        return self.size(rel) if self.holds(rel) else default

    def intern(self, symbol: str) -> int:
        return self._ask("intern", symbol)

    def index_key(self, rel: str, key: tuple) -> tuple:
        return self._ask("index_key", rel, key)

    def fanout(self, rel: str, key: tuple) -> float:
        return self._ask("fanout", rel, key)

    def rule_id(self, ci: int) -> int:
        return self._ask("rule_id", ci)


class _PlanCache:
    """The last plans made for each stratum, each with the questions its
    planning asked and their answers. Planning is a function of those
    answers: a stratum that would get the same ones again (the same module
    run again, or one alike) takes the plan made then. The questions are
    asked again in order (each with the effects it has when first asked)
    up to the first answer that differs; then the stratum is planned anew.
    On a small module, planning is most of a rule evaluation's time."""

    KEPT = 4   # plans per stratum (a pipeline runs a program on a few modules)

    def __init__(self):
        self.plans: dict[int, tuple] = {}   # id(stratum) -> (stratum, [(log, plan), ...], latest first)

    def plan(self, sources: PlanSources, stratum, make):
        """The plan make(asked) gives for `stratum` (asked: an _Asked over
        `sources`, all that make may read of them), or the one kept for the
        same answers."""
        entry = self.plans.get(id(stratum))
        kept = entry[1] if entry is not None and entry[0] is stratum else []
        for k, (log, made) in enumerate(kept):
            if all(ask(sources, *args) == answer for ask, args, answer in log):
                kept.insert(0, kept.pop(k))
                return made
        asked = _Asked(sources)
        made = make(asked)
        self.plans[id(stratum)] = (stratum, [(asked.log, made)] + kept[:self.KEPT - 1])
        return made


PLANS = _PlanCache()
