"""The relations of a memory-engine run held in C, and its strata evaluated
there (sdylog.datalog._native.Database, source in sdylog/datalog/native/).

Every relation without a float column is a C table of int64 rows; symbols
are interned to ids by the database (one table of strings per engine).
A stratum whose clauses lower (native_plan.py: plans made by plan.py with
sizes and index choices read from the C tables, kept per program) runs in C,
its results written into the stratum's tables: plain and recursive strata,
rank-ordered ones (ranked.py) and stepped ones (stepped.py, their seed and
step programs' strata too), consecutive ones in one call, a whole run in
one while the plans kept fit the sizes. One that does not lower runs in
Python on sets made from the tables (memory_engine.py), its results loaded
back.
"""
from __future__ import annotations

from sdylog.datalog.native_plan import _native, lower_stratum, plan_words
from sdylog.datalog.pickled import Pickled, same_programs
from sdylog.datalog.plan import Context, plan_stratum, plans_of
from sdylog.datalog.ranked import RankedStratum, StaticIndexes
from sdylog.datalog.stepped import NOW, PREV, SEED, aux


def table_shape(decl) -> tuple | None:
    """(arity, per column whether it holds symbols) of the C table of
    DECL's relation; None for one with a float column (held in Python)."""
    kinds = decl.kinds
    if "float" in kinds:
        return None
    return decl.arity, tuple(k == "symbol" for k in kinds)


class TableLayout:
    """The C tables of a program's relations (those with no float column),
    worked out once per program (memory_engine.Schema): their numbers in
    every Database made from it, and the symbols its strata name, with ids
    given in the order they are first bound. A Database made from the
    layout interns the symbols known then first, with those ids: a
    stratum's plan loaded in C (table numbers, symbol ids) once serves
    every later database (`bound`; `programs`: the programs whose
    strata are bound here, the others per database). Saved with the
    program (cache.py): its symbols and the plans it bound (_native.Plan,
    pickled as its words), so that another process loads them in C
    without binding them again (each when first run: one per stratum, of
    the few kept for other sizes), the batches made of them while the
    plans kept are those saved (_batch), so that its first run makes none
    again, and the frees of runs asking for some relations (frees), which
    a first run made again otherwise (~2% of one on a small module)."""

    def __init__(self, decls: dict, programs: tuple = ()):
        self.numbers: dict[str, int] = {}           # relation -> table number
        self.arity: dict[str, int] = {}
        self.shapes: list[tuple] = []               # per table: table_shape
        for name, decl in decls.items():
            shape = table_shape(decl)
            if shape is not None:
                self.numbers[name] = len(self.shapes)
                self.arity[name] = decl.arity
                self.shapes.append(shape)
        self.in_python = [name for name in decls if name not in self.numbers]   # (a float column)
        self.programs = programs
        self.symbols: list[str] = []                # symbol id -> its string
        self.symbol_ids: dict[str, int] = {}
        self.bound: dict = {}   # stratum's relations -> {id(sizes planned for): _Bound}
        self.added = 0          # plans bound, batches made since made or loaded (cache.py saves the program again)
        # id(first stratum) -> {(strata offered at most, id(the plan picked for it)): native_db._Batch},
        # each stratum's entry bounded as `bound`'s (native_db._batch)
        self.batches: dict = {}
        # id(engine.DropPlan) -> (it, its tables per stratum: native_db.frees); saved with
        # the program, whose run_cache holds the DropPlans (engine.drop_plan)
        self.frees: dict = {}
        self.saved = False      # whether `bound` holds plans read from disk (native_db._forget_saved_plans)

    def database(self, native):
        """A new Database of these tables, empty, knowing the symbols interned so far."""
        return native.Database(self.shapes, self.symbols)

    def __getstate__(self):
        state = {**self.__dict__, "frees": list(self.frees.values()), "added": 0}
        state["bound"] = {rels: list(known.values()) for rels, known in self.bound.items()}
        # (those made since the last plan was: the plans they offer are those saved)
        state["batches"] = [b for known in self.batches.values() for b in known.values()
                            if b.changes == _changes(b.program)]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # (keyed by ids in this process: the sizes are those of the plans kept,
        # pickled with the program, see plan.PlanCache; a batch's first stratum
        # and plan picked, the program's and its PlanCache's)
        self.bound = {rels: {id(b.seen): b for b in known} for rels, known in state["bound"].items()}
        self.saved = bool(self.bound)
        self.frees = {id(plan): (plan, made) for plan, made in state["frees"]}
        self.batches = {}
        for b in state["batches"]:
            self.batches.setdefault(id(b.scanned[0]), {})[b.asked, id(b.picked)] = b

    def intern(self, symbol: str) -> int:
        i = self.symbol_ids.get(symbol)
        if i is None:
            i = self.symbol_ids[symbol] = len(self.symbols)
            self.symbols.append(symbol)
        return i

    def covers(self, program) -> bool:
        return any(p is program for p in self.programs)


class NativeDB:
    """The C tables of an engine's relations (those with no float column):
    those of its TableLayout, made at once, and any declared later."""

    def __init__(self, native, layout: TableLayout):
        self.db = layout.database(native)
        self.maxrank = native.MAXRANK                # rank columns a rank-ordered stratum run in C may have
        self.layout = layout
        self.known = len(layout.symbols)            # symbols interned as the layout numbers them
        # relation -> table number, and its arity: the layout's own dicts, shared (only declare writes, copying first)
        self.table: dict[str, int] = layout.numbers
        self.arity: dict[str, int] = layout.arity
        self.intern = self.db.intern      # str -> symbol id
        self.bound: dict = {}             # as the layout's, for the strata of programs it does not cover
        self.batch = 1 << 30              # strata run_strata offers C at most (see there)

    def declare(self, decl) -> None:
        if decl.name in self.table:
            return
        shape = table_shape(decl)
        if shape is not None:
            if self.table is self.layout.numbers:
                self.table, self.arity = dict(self.table), dict(self.arity)
            self.table[decl.name] = self.db.add_table(*shape)
            self.arity[decl.name] = decl.arity

    def holds(self, relation: str) -> bool:
        return relation in self.table

    def numbers(self, relations) -> list[int]:
        """The table numbers of those of `relations` held in C."""
        table = self.table
        return [table[r] for r in relations if r in table]

    def insert(self, relation: str, rows) -> bool:
        """Add rows (tuples of the relation's Python values: int, str for a
        symbol); False, nothing added, when one has no C form (a row of
        another arity, a value of another type, an int beyond 64 bits)."""
        return self.db.insert(self.table[relation], rows)

    def clear(self, relations) -> None:
        """Empty the tables of those of `relations` held in C."""
        self.db.clear(self.numbers(relations))

    def drop_sets(self, relations) -> None:
        """Free the hash sets that deduplicate the rows of those of
        `relations` held in C (no row goes in before one is cleared or gets
        its set again; rows() gives them in row order)."""
        self.db.drop_sets(self.numbers(relations))

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
    indexes built, the columns a lookup uses) read from the C tables and
    their indexes."""

    def __init__(self, ndb: NativeDB):
        super().__init__(None)
        self.ndb = ndb

    def size(self, rel: str) -> int:
        return self.ndb.size(rel)

    def fanout(self, rel: str, key: tuple) -> float:
        size = self.size(rel)
        if not size:
            return 0.0
        return size / max(self.ndb.db.index_keys(self.ndb.table[rel], key), 1)

    def built(self, rel: str) -> dict:
        if rel not in self.ndb.table:
            return {}
        size = self.size(rel)
        return {key: size / max(n, 1) for key, n in self.ndb.db.built(self.ndb.table[rel])}

    def _sample_distinct(self, rel: str, col: int) -> int:
        return self.ndb.db.distinct(self.ndb.table[rel], col, self.SAMPLE)


def run_strata(ndb: NativeDB, indexes: NativeIndexes, program, strata, changed, frees=None) -> tuple[list, bool]:
    """Evaluate in C, in one call, the leading strata of `strata` C can
    evaluate: the first planned for the sizes now, each later one with the
    plans kept for it, C running the first whose sizes it checks fit (the
    first stratum none fits ends the call: the caller plans it). Returns
    the rounds (waves, steps) of each stratum evaluated (none: the first
    does not lower, or was handed back), and whether the next one is
    handed back: Python evaluates it (an overflow, a division by zero: a
    plain or recursive stratum's tables are then partly written, a
    stepped one's as before it; or a stepped stratum whose step program's
    stratum had no plan, see _stepped).
    changed(relations) is called once with the relations they wrote.
    `frees` (see frees()): what C frees after each stratum. (After a
    stratum no plan fitted, the next calls offer fewer strata: see
    ndb.batch.)"""
    batch = _batch(ndb, indexes, program, strata)
    if batch is None:
        return [], False
    try:
        status, done, rounds = ndb.db.run(batch.offered) if frees is None else ndb.db.run(batch.offered, frees)
    except _native.PlanRefused as refused:
        # (a plan of the layout read from disk that C refuses to load: a cache file
        # damaged past its checksum. As cache.py does with a corrupt file: forget the
        # layout's plans, bind them again, and save the program again at exit. The
        # strata before the refused one ran, freeing what they free, so they cannot run
        # again (a negation of a relation freed would derive more); it did not start (a
        # stepped one's auxiliary tables emptied): the next call goes on from it)
        if not _forget_saved_plans(ndb):
            raise
        if not refused.rounds:
            return run_strata(ndb, indexes, program, strata, changed, frees)
        changed([r for s in batch.strata[:refused.done + 1] for r in _written(s)])
        return refused.rounds, False
    # (when no plan kept fits a stratum, those after it are likely not to either, the
    # data being of other sizes than when they were kept: offer one stratum at a
    # time, then twice as many after each call that ran them all)
    # (a stepped stratum stale: a step program's stratum never planned, no sign of the sizes)
    stepped_stale = status == "stale" and batch.strata[done].stepped
    n = len(batch.offered)
    ndb.batch = 1 if status == "stale" and not stepped_stale else 2 * ndb.batch if done == n else ndb.batch
    # (a stratum handed back may be partly written, a stepped one's auxiliary tables emptied)
    changed(batch.relations if done == n else [r for s in batch.strata[:done + 1] for r in _written(s)])
    return rounds, status == "abort" or stepped_stale


def _forget_saved_plans(ndb: NativeDB) -> bool:
    """Drop the plans bound by the layout (and the database) when the
    layout's came from disk (TableLayout.saved), so that they are bound
    again and the program saved again; False when they did not."""
    layout = ndb.layout
    if not layout.saved:
        return False
    layout.saved = False
    layout.bound.clear()
    layout.batches.clear()
    layout.added += 1   # (cache.py writes the program again)
    ndb.bound.clear()
    return True


def frees(ndb: NativeDB, plan) -> list:
    """Per stratum of a run asked for some relations (engine.DropPlan), the
    tables that no later stratum reads (emptied after it) and those whose
    hash sets no later stratum needs (dropped). Kept by the layout for a
    plan whose relations it numbers."""
    got = ndb.layout.frees.get(id(plan))
    if got is not None and got[0] is plan:
        return got[1]
    made = [(ndb.numbers(after), ndb.numbers(sets)) for after, sets in zip(plan.after, plan.sets)]
    if all(r in ndb.layout.numbers for group in (*plan.after, *plan.sets) for r in group):
        if len(ndb.layout.frees) >= 16:   # (plans of runs asking for other relations)
            ndb.layout.frees.clear()
        ndb.layout.frees[id(plan)] = (plan, made)
        ndb.layout.added += 1   # (cache.py saves the program again, with them)
    return made


def _written(stratum) -> list:
    """The relations whose tables C writes when it evaluates the stratum."""
    if not stratum.stepped:
        return list(stratum.relations)
    return [*stratum.relations, *(aux(r, part) for r in stratum.relations for part in (SEED, PREV, NOW))]


class _Batch:
    """The strata one db.run call offers C, and per stratum what it offers
    (the C plans of the plans kept for it, latest first when it was made)."""

    def __init__(self):
        self.strata: list = []
        self.offered: list = []
        # the relations the strata write (a set: the engine's bookkeeping takes
        # them as one, set to set, without reading each name's hash again)
        self.relations: frozenset = frozenset()
        self.scanned: list = []     # the strata looked at: those offered, and the one that ended the batch
        self.need = 0               # symbols a database must know to run it (TableLayout.bound)
        self.changes = 0            # the PlanCaches' plans made (_changes) when it was made
        # (kept by the layout, _batch: the program, the strata asked for, the first one's plan picked)
        self.program, self.asked, self.picked = None, 0, None

    def __getstate__(self):   # (saved with the plans it offers: none made since, TableLayout)
        return {**self.__dict__, "changes": 0}


def _batch(ndb: NativeDB, indexes: NativeIndexes, program, strata) -> _Batch | None:
    """What run_strata offers C (None: not even the first stratum runs
    there). For a program the layout covers, the batch made for the same
    strata and the same plan picked for the first is offered again while
    the plans kept for them are those it offers (no plan made since,
    _changes; its C plans are the layout's, serving every database that
    knows their symbols): a small module's runs have hundreds of strata of few relations
    each, and making the batch again cost more than running it. (Runs on
    modules of other sizes pick other plans for a first stratum in turn: a
    batch for each. The later strata's plans are offered in the order they
    had when it was made: C runs the first whose sizes it checks fit, any
    one giving the same rows.) _batch_made is the plain way. (A plan kept
    but not offered would make C find none fitting, "stale", not other
    rows: the caller plans it.)"""
    first = strata[0]
    if not _in_c(ndb, program, first):
        return None
    picked = _pick(ndb, indexes, program, first)
    if picked is None:
        return None
    strata = strata[:ndb.batch]
    layout = ndb.layout
    if not layout.covers(program):
        return _batch_made(ndb, program, strata, False)
    batches = layout.batches.setdefault(id(first), {})
    key = (len(strata), id(picked))
    changes = _changes(program)
    made = batches.get(key)
    if (made is not None and made.changes == changes and made.need <= ndb.known
            and made.scanned[0] is first and made.scanned == strata[:len(made.scanned)]):
        return made
    made = _batch_made(ndb, program, strata, True)
    if made is not None and made.need <= ndb.known:
        made.changes, made.program, made.asked, made.picked = changes, program, len(strata), picked
        if len(batches) >= 2 * plans_of(program).KEPT:   # (as _bound: it holds batches of plans no longer kept)
            batches.clear()
        batches[key] = made
        layout.added += 1
    return made


def _pick(ndb: NativeDB, indexes: NativeIndexes, program, stratum):
    """The plan of the first stratum of a batch for the sizes now (planned
    when none kept fits), None when it does not lower; a stepped stratum's
    programs' strata run with the plans kept for them (C says when none
    fits: the caller evaluates the stratum)."""
    if stratum.stepped:
        return stratum
    if stratum.subsumptive:
        ranked = _ranked(ndb, program, stratum)
        picked = None if ranked is None else ranked.plans(indexes)
        return None if picked is None or picked.lowered is None else picked
    return plans_of(program).get(("c", stratum.relations), lambda rel: ndb.size(rel) if ndb.holds(rel) else None,
                                 lambda size: _lower(program, stratum, Context(size, index_key=indexes.index_key)),
                                 same_programs)


def _changes(program) -> int:
    """How often the plans kept for the program's strata (and its stepped
    strata's programs') changed: plans made (PlanCache.added)."""
    programs = program.run_cache.get("step programs")
    if programs is None:
        programs = program.run_cache["step programs"] = [
            p for s in program.strata if s.stepped for p in (s.step_plan.seeds, s.step_plan.step) if p is not None]
    return plans_of(program).added + sum(plans_of(p).added for p in programs)


def _in_c(ndb: NativeDB, program, stratum) -> bool:
    """Whether C may evaluate the stratum: every relation it writes held in
    C (and, for a rank-ordered one, every relation it reads: its plan reads
    their sizes)."""
    if not all(map(ndb.holds, _written(stratum))):
        return False
    return not stratum.subsumptive or all(ndb.holds(q) for r in stratum.relations for q in program.reads[r])


def _batch_made(ndb: NativeDB, program, strata, covered: bool) -> _Batch | None:
    """The leading strata C may evaluate with a plan kept (the first one's
    made already: see _batch), and per stratum what db.run is offered."""
    batch = _Batch()
    for s in strata:
        batch.scanned.append(s)
        offered = _offered(ndb, program, s, covered, batch) if _in_c(ndb, program, s) else None
        if not offered:
            break
        batch.strata.append(s)
        batch.offered.append(offered)
    if not batch.strata:
        return None
    batch.relations = frozenset(r for s in batch.strata for r in _written(s))
    return batch


def _offered(ndb: NativeDB, program, stratum, covered: bool, batch: _Batch):
    """What db.run is offered for a stratum: the C plans of the plans kept
    for it (a list), a stepped one's (relations, seed strata, step strata)
    (see db.c's run_stepped), or None (C cannot evaluate it)."""
    if stratum.stepped:
        return _stepped(ndb, stratum, covered, batch)
    plans = plans_of(program)

    def nearest(key):   # (C runs the first that fits: the nearest to the sizes now, PlanCache)
        return plans.nearest(plans.kept(key), lambda rel: ndb.size(rel) if ndb.holds(rel) else None)
    if stratum.subsumptive:
        if _ranked(ndb, program, stratum) is None:
            return None
        return [_prepared(ndb, covered, program, stratum, (seen, made.lowered), plans, batch)
                for seen, made in nearest(("ranked", stratum.relations)) if made.lowered is not None]
    return [_prepared(ndb, covered, program, stratum, kept, plans, batch)
            for kept in nearest(("c", stratum.relations)) if kept[1] is not None]


def _ranked(ndb: NativeDB, program, stratum) -> RankedStratum | None:
    """The rank-ordered stratum (made once per program), None when its
    ranks have more columns than C's (MAXRANK)."""
    key = ("ranked stratum", stratum.relations)
    ranked = program.run_cache.get(key)
    if ranked is None:
        ranked = program.run_cache[key] = RankedStratum(program, stratum)
    return ranked if len(ranked.rank_cols[0]) <= ndb.maxrank else None


def _stepped(ndb: NativeDB, stratum, covered: bool, batch: _Batch) -> tuple | None:
    """A stepped stratum's offer (see _offered): the plans kept for its
    programs' strata. None when a stratum of its seed program has none (C
    would run up to it and find none fitting, every time the stratum
    runs): the batch ends before it and Python takes it (planning them as
    it runs them). A step program's stratum may have none (a step program
    never ran: a stratum without seeds takes no step) and is offered
    none: if C must run it, it hands the stratum back (run_strata)."""
    step = stratum.step_plan
    relations = [(*(ndb.table[name] for name in (r, aux(r, SEED), aux(r, PREV), aux(r, NOW))), step.step_col[r])
                 for r in step.relations]
    parts = []
    for part in (step.seeds, step.step):
        strata = []
        for s in part.strata if part is not None else ():
            offered = _offered(ndb, part, s, covered and ndb.layout.covers(part), batch) if (
                _in_c(ndb, part, s)) else None
            if offered is None or offered == [] and part is step.seeds:
                return None
            strata.append(offered)
        parts.append(strata)
    return relations, *parts


def _prepared(ndb: NativeDB, covered: bool, program, stratum, kept, plans, batch: _Batch):
    """The C plan (a _native.Plan) of db.run for a stratum's plan `kept` (the sizes it was
    planned for, its C programs: PlanCache.kept), bound to the database.
    Bound once per layout for the strata of the programs it covers (usable
    by a database that knows the symbols they name: TableLayout; batch.need
    is raised to their number), else once per database."""
    if covered:
        got = _bound(ndb.layout.bound, stratum, kept, plans, lambda: _layout_bound(ndb, program, stratum, kept, plans))
        if got.need <= ndb.known:
            batch.need = max(batch.need, got.need)
            return got.plan
        batch.need = ndb.known + 1    # (bound by the database: the batch serves it only)
    got = _bound(ndb.bound, stratum, kept, plans,
                 lambda: _Bound(kept[0], _native.Plan(_plan_words(ndb, program, stratum, kept, plans, ndb.intern)), 0))
    return got.plan


class _Bound:
    """A plan kept (`seen`: the sizes it was planned for) bound to a
    database's tables and symbols: its C plan (a _native.Plan of its words,
    loaded when first run), and `need`, the symbols a database must know
    to run it."""

    __slots__ = ("seen", "plan", "need")

    def __init__(self, seen: dict, plan, need: int):
        self.seen, self.plan, self.need = seen, plan, need

    def __reduce__(self):
        return _Bound, (self.seen, self.plan, self.need)


def _bound(bound: dict, stratum, kept, plans, make) -> _Bound:
    """make()'s _Bound for the plan `kept` of `stratum`, kept in `bound`
    (TableLayout.bound or NativeDB.bound) under the plan's sizes. Binding
    one drops those of plans no longer kept (the layout's are saved with
    the program: every start would read them)."""
    seen = kept[0]
    known = bound.setdefault(stratum.relations, {})
    got = known.get(id(seen))
    if got is None or got.seen is not seen:
        live = [s for key in (("c", stratum.relations), ("ranked", stratum.relations)) for s, _ in plans.kept(key)]
        for gone in [i for i, b in known.items() if not any(b.seen is s for s in live)]:
            del known[gone]
        got = known[id(seen)] = make()
    return got


def _layout_bound(ndb: NativeDB, program, stratum, kept, plans) -> _Bound:
    """_plan_words with symbols interned by the layout, and the number of
    symbols a database must know to run them."""
    ids = []   # (those of the symbols bound: most plans name none)

    def intern(symbol: str) -> int:
        ids.append(ndb.layout.intern(symbol))
        return ids[-1]
    words = _plan_words(ndb, program, stratum, kept, plans, intern)
    ndb.layout.added += 1
    return _Bound(kept[0], _native.Plan(words), 1 + max(ids, default=-1))


def _plan_words(ndb: NativeDB, program, stratum, kept, plans, intern) -> bytes:
    """The C plan's words (native_plan.plan_words) for a stratum's plan `kept` (its out tables,
    indexes, programs and size checks, and a rank-ordered stratum's ranks
    and domination tests; see db.c), its symbols interned by `intern`."""
    seen, lowered = kept
    base, deltas, doms, specs = lowered.value
    out = [ndb.table[r] for r in stratum.relations]
    checks = [(ndb.table[rel], *bounds) for rel, bounds in seen.items() if bounds is not None]
    ranks = _ranked(ndb, program, stratum).rank_cols if stratum.subsumptive else ()

    def bound(programs):
        return [p.bind(intern) for p in programs]
    return plan_words(out, [(ndb.table[rel], key, rel in stratum.relations) for rel, key in specs],
                      bound(base), [bound(g) for g in deltas], checks, ranks, [bound(g) for g in doms])


def _lower(program, stratum, ctx: Context) -> Pickled | None:
    """The stratum's C programs (native_plan.lower_stratum); None when one
    reads a relation not held in C or does not lower."""
    plans = plan_stratum(program, stratum, ctx)
    lowered = lower_stratum(plans.base, plans.deltas, frozenset(stratum.relations))
    if lowered is None or any(ctx.size(rel) is None for rel, _ in lowered.value[3]):
        return None
    return lowered
