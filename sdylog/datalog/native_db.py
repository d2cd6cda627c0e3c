"""The relations of a memory-engine run held in C, and its plain and
recursive strata evaluated there (sdylog.datalog._native.Database, source in
sdylog/datalog/native/db.c).

Every relation without a float column is a C table of int64 rows; symbols
are interned to ids by the database (one table of strings per engine).
A stratum whose clauses lower (native_plan.py: plans made by plan.py with
sizes and index choices read from the C tables, kept per program) runs in C,
its results written into the stratum's tables; one that does not lower runs in Python on
sets made from the tables (memory_engine.py), its results loaded back.
"""
from __future__ import annotations

from sdylog.datalog.native_plan import CannotLower, IndexSlots, lower
from sdylog.datalog.plan import Context, plan_stratum, plans_of
from sdylog.datalog.ranked import StaticIndexes


class NativeDB:
    """The C tables of an engine's relations (those with no float column)."""

    def __init__(self, native):
        self.db = native.Database()
        self.table: dict[str, int] = {}   # relation -> table number
        self.arity: dict[str, int] = {}
        self.intern = self.db.intern      # str -> symbol id

    def declare(self, decl) -> None:
        if decl.name in self.table:
            return
        kinds = decl.kinds
        if "float" not in kinds:
            self.table[decl.name] = self.db.add_table(decl.arity, tuple(k == "symbol" for k in kinds))
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


def run_strata(ndb: NativeDB, indexes: NativeIndexes, program, strata, changed) -> tuple[list, bool]:
    """Evaluate in C, in one call, the leading plain and recursive strata of
    `strata`: the first planned for the sizes now, each later one with the
    last plan made for it, whose sizes C checks before it runs (the first
    that no longer fits ends the call: the caller plans it). Returns the
    rounds of each stratum evaluated (none: the first does not lower), and
    whether the next one's run handed back (an overflow, a division by zero:
    its tables are partly written). changed(relation) is called for each
    relation they wrote."""
    plans = plans_of(program)
    batch = []
    for s in strata:
        if s.subsumptive or s.stepped or not all(ndb.holds(r) for r in s.relations):
            break
        key = ("c", s.relations)
        checks = []
        if not batch:
            made = plans.get(key, lambda rel: ndb.size(rel) if ndb.holds(rel) else None,
                             lambda size: _lower(program, s, Context(size, index_key=indexes.index_key)))
        else:
            latest = plans.latest(key)
            if latest is None:
                break
            seen, made = latest
            checks = [(ndb.table[rel], *plans.bounds(was)) for rel, was in seen.items() if was is not None]
        if made is None:
            break
        batch.append((s, made, checks))
    if not batch:
        return [], False
    intern = ndb.intern
    status, done, rounds = ndb.db.run([
        ([ndb.table[r] for r in s.relations], [(ndb.table[rel], key, rel in s.relations) for rel, key in specs],
         [p.bind(intern) for p in base], [[p.bind(intern) for p in g] for g in deltas], checks)
        for s, (base, deltas, specs), checks in batch])
    ran = batch[:done + (status == "abort")]
    for s, _, _ in ran:
        for r in s.relations:
            changed(r)
    for s, (_, _, specs), _ in ran[:done]:   # (what index_key knows of built indexes, as in Python)
        for rel, key in specs:
            if key and rel not in s.relations:
                indexes.fanout(rel, key)
    return rounds, status == "abort"


def _lower(program, stratum, ctx: Context) -> tuple | None:
    """The stratum's C programs (base clauses, delta groups, index specs);
    None when one reads a relation not held in C or does not lower."""
    plans = plan_stratum(program, stratum, ctx)
    slots = IndexSlots()
    here = frozenset(stratum.relations)
    try:
        base = [lower(p, slots) for p in plans.base]
        deltas = [[lower(p, slots, here) for p in g] for g in plans.deltas]
    except CannotLower:
        return None
    specs = slots.specs()
    if any(ctx.size(rel) is None for rel, _ in specs):
        return None
    return base, deltas, specs
