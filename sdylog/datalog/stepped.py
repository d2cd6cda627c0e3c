"""Step-by-step evaluation of a stratum (XY-stratification, as in Dedalus).

Some decisions are sequential: a greedy loop picks the best candidate, then
the candidates left change, then it picks again. Stated in Datalog, the
choice at step k+1 reads aggregates and negations over the state at step k:
a cycle through negation, which plain stratification rejects. A *stepped*
stratum makes the step explicit. It is a recursive stratum whose relations
all have one column of type `Step` (any subtype of number), and whose
clauses say which step they read:

    chosen(k, o, c) :- cand(k, o, c, _), !better(k, o, c).        // step k from step k
    cand(k + 1, o, c, s) :- cand(k, o, c, s), !chosen(k, o, c).   // step k+1 from step k

In a clause that reads relations of the stratum, all of them (in
negations and aggregates too) carry the same step variable `k`, bound by
one of them read positively; the head's step is `k` (a *same-step* clause)
or `k + 1` (a *next-step* clause). A clause that reads none (a *seed*)
derives tuples at whatever steps it says.

Evaluation goes step by step, s = the smallest seed step, then s + 1, ...:
the tuples of step s are the seeds of step s, the next-step clauses over
the tuples of step s - 1 (complete by then: negating or aggregating them is
safe), and the same-step clauses over the tuples of step s. The same-step
clauses are stratified among themselves (a negation or aggregate over a
relation of the same step needs it complete first: it must be in a lower
stratum of the step). The run stops when a step derives nothing and no
seed lies beyond it (it jumps to the next seed step when one does). The
number of steps is the program's: for a greedy loop, its number of rounds.

How: at load time each relation R of the stratum gets three auxiliary
relations (the program must not declare their names): `R__seed` (the
seeds, every step), `R__prev` (step s - 1) and `R__now` (step s). The seed clauses become a
program deriving `R__seed`; the other clauses, rewritten over `R__prev` and
`R__now`, a program of ordinary strata that the engine runs once per step
after loading `R__prev` with the last step's tuples and `R__now` with the
step's seeds. R itself receives every step's tuples at the end. With the C
extension, once plans are kept for every stratum of the seed and step
programs (a run of the program planned them), the whole stepped stratum
runs in C (db.c's run_stepped, inside the call that runs the strata
around it). StepEvaluation below is the Python path: SDYLOG_NATIVE=0,
provenance, a stratum C hands back (an overflow), and a program's first
runs (until those plans are kept: its seed and step programs' strata are
run, and planned, as any others).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from sdylog.datalog.ast import (Aggregate, Atom, Clause, Comparison, Functor, Negation, NumberLit, RelationDecl,
                                Var)
from sdylog.datalog.lexer import error
from sdylog.datalog.semantics import atoms_of

STEP_TYPE = "Step"
# A bound on the steps of one evaluation (a program deriving ever later steps never stops).
MAX_STEPS = 1_000_000


def step_column(decl: RelationDecl) -> int | None:
    """The relation's column of type Step, None when it has none (an error
    when it has several)."""
    cols = [i for i, c in enumerate(decl.columns) if c.type_name == STEP_TYPE]
    if len(cols) > 1:
        raise error(decl.loc, f"relation '{decl.name}' has {len(cols)} columns of type {STEP_TYPE}: "
                    f"a relation evaluated step by step has one")
    return cols[0] if cols else None


# The auxiliary relations of a relation of the stratum (the module docstring).
SEED, PREV, NOW = AUX_PARTS = ("seed", "prev", "now")


def aux(relation: str, part: str) -> str:
    """The name of an auxiliary relation: part is one of AUX_PARTS."""
    if part not in AUX_PARTS:
        raise ValueError(f"no auxiliary relation part {part!r}: one of {AUX_PARTS}")
    return f"{relation}__{part}"


@dataclass
class StepPlan:
    """How a stepped stratum is evaluated (see the module docstring)."""
    relations: tuple[str, ...]     # the stratum's relations
    step_col: dict                 # relation -> its Step column
    seeds: object                  # Program deriving R__seed (None: no seed clause)
    step: object                   # Program of one step, deriving R__now from R__prev and R__now
    origin: dict                   # clause index in `step` / `seeds` -> the original clause index
    seed_origin: dict


def plan_steps(relations: dict, clauses: list, stratum, make_program) -> StepPlan:
    """The StepPlan of `stratum` of a program of `relations` and `clauses`;
    make_program(relations, clauses, name) checks and stratifies a set of
    clauses over the given declarations."""
    here = set(stratum.relations)
    # (stratify marks a stratum stepped only when every relation has a Step column)
    step_col = {r: step_column(relations[r]) for r in stratum.relations}
    seed_clauses, seed_origin, step_clauses, origin = [], {}, [], {}
    for ci in stratum.clauses:
        c = clauses[ci]
        atoms = [a for a, _ in atoms_of(c.body) if a.relation in here]
        if not atoms:
            seed_origin[len(seed_clauses)] = ci
            seed_clauses.append(replace(c, head=replace(c.head, relation=aux(c.head.relation, SEED))))
            continue
        part = PREV if _next_step(c, atoms, step_col) else NOW
        body = tuple(_rename_literal(lit, here, part) for lit in c.body)
        origin[len(step_clauses)] = ci
        step_clauses.append(replace(c, head=replace(c.head, relation=aux(c.head.relation, NOW)), body=body))
    aux_decls = {}
    for r in stratum.relations:
        d = relations[r]
        for name in (aux(r, part) for part in AUX_PARTS):
            if name in relations:
                raise error(relations[name].loc, f"relation '{name}' has the name of an auxiliary relation of "
                            f"the stepped stratum of '{r}': rename it")
            aux_decls[name] = RelationDecl(name, d.columns, d.loc)
    # (each part declares the relations its clauses name and every auxiliary
    # one: an engine declares a part's relations at each run)
    seeds = make_program(_named(relations, seed_clauses, aux_decls), seed_clauses,
                         f"seeds of {', '.join(stratum.relations)}") if seed_clauses else None
    step = make_program(_named(relations, step_clauses, aux_decls), step_clauses,
                        f"a step of {', '.join(stratum.relations)}")
    return StepPlan(tuple(stratum.relations), step_col, seeds, step, origin, seed_origin)


def _named(relations: dict, clauses: list[Clause], aux_decls: dict) -> dict:
    """The declarations of the relations `clauses` name, and `aux_decls`."""
    named = {c.head.relation for c in clauses} | {a.relation for c in clauses for a, _ in atoms_of(c.body)}
    return {**{r: d for r, d in relations.items() if r in named}, **aux_decls}


def _next_step(c: Clause, atoms: list[Atom], step_col: dict) -> bool:
    """Whether the clause is a next-step clause (else a same-step one); a
    located error when it does not have the form the module docstring says."""
    what = f"in the stepped rule for '{c.head.relation}'"
    names = set()
    for a in atoms:
        arg = a.args[step_col[a.relation]]
        if not isinstance(arg, Var):
            raise error(a.loc, f"{what}, the {STEP_TYPE} column of '{a.relation}' must be a variable")
        names.add(arg.name)
    if len(names) != 1:
        raise error(c.loc, f"{what}, the relations of its stratum are read at steps {', '.join(sorted(names))}: "
                    f"one step variable only (the head is at that step or the next)")
    (var,) = names
    if not any(a.relation in step_col and a.args[step_col[a.relation]] == Var(var, None)
               for a in c.body if isinstance(a, Atom)):
        raise error(c.loc, f"{what}, the step variable {var} must be bound by a relation of the stratum "
                    f"read positively")
    head = c.head.args[step_col[c.head.relation]]
    if isinstance(head, Var) and head.name == var:
        return False
    if (isinstance(head, Functor) and head.op == "+" and len(head.args) == 2 and head.args[0] == Var(var, None)
            and isinstance(head.args[1], NumberLit) and head.args[1].value == 1):
        return True
    raise error(c.head.loc, f"{what}, the head's {STEP_TYPE} must be {var} (the same step) or {var} + 1 "
                f"(the next step)")


def _rename_literal(lit, here: set, part: str):
    """The literal reading the `part` auxiliary relations of those in `here`."""
    if isinstance(lit, Atom):
        args = tuple(_rename_expr(a, here, part) for a in lit.args)
        return Atom(aux(lit.relation, part) if lit.relation in here else lit.relation, args, lit.loc)
    if isinstance(lit, Negation):
        return Negation(_rename_literal(lit.atom, here, part), lit.loc)
    if isinstance(lit, Comparison):
        return replace(lit, left=_rename_expr(lit.left, here, part), right=_rename_expr(lit.right, here, part))
    return lit


def _rename_expr(e, here: set, part: str):
    if isinstance(e, Aggregate):
        return replace(e, body=tuple(_rename_literal(lit, here, part) for lit in e.body))
    if isinstance(e, Functor):
        return replace(e, args=tuple(_rename_expr(a, here, part) for a in e.args))
    return e


class StepEvaluation:
    """One evaluation of a stepped stratum of `program` in `engine` (a
    MemoryEngine): the strata of its seed and step programs run there as
    any others (in C where they lower)."""

    def __init__(self, engine, program, plan: StepPlan):
        self.engine = engine
        self.program = program
        self.plan = plan
        self.steps = 0
        self.prov: dict[str, dict] = {}   # relation -> tuple -> (rule id, height), with provenance

    def run(self) -> None:
        plan, eng = self.plan, self.engine
        pending: dict[int, dict[str, list]] = {}   # step -> relation -> its seeds
        if plan.seeds is not None:
            eng.declare(plan.seeds)
            eng._run_strata(plan.seeds, plan.seeds.strata)
        for r in plan.relations:
            col = plan.step_col[r]
            seeds = list(eng._loaded.get(r, ()))
            if plan.seeds is not None:
                seeds += self._take(r, aux(r, SEED), plan.seed_origin)
            for t in seeds:
                pending.setdefault(t[col], {}).setdefault(r, []).append(t)
        if plan.seeds is not None:
            eng._replace({aux(r, SEED): [] for r in plan.relations})
        eng.declare(plan.step)
        done: dict[str, list] = {r: [] for r in plan.relations}
        prev: dict[str, list] = {}
        step = min(pending) if pending else None
        while step is not None:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise error(None, f"the stepped stratum of {', '.join(plan.relations)} did not stop "
                            f"after {MAX_STEPS} steps")
            seeds = pending.pop(step, {})
            eng._replace({**{aux(r, PREV): prev.get(r, []) for r in plan.relations},
                          **{aux(r, NOW): seeds.get(r, []) for r in plan.relations}})
            eng._run_strata(plan.step, plan.step.strata)
            now = {r: self._take(r, aux(r, NOW), plan.origin) for r in plan.relations}
            for r, rows in now.items():
                done[r].extend(rows)
            if any(now.values()):
                step, prev = step + 1, now
            elif pending:
                step, prev = min(pending), {}
            else:
                step = None
        eng._replace({aux(r, part): [] for r in plan.relations for part in (PREV, NOW)})
        for r in plan.relations:
            eng._store(r, set(done[r]), self.prov.get(r))

    def _take(self, relation: str, name: str, origin: dict) -> list:
        """The rows of auxiliary relation `name`, derived for `relation` by the
        seed or step program. With provenance, each row's first derivation is
        kept, its rule id mapped back to the original program's (`origin`:
        clause index in that program -> the original clause)."""
        eng = self.engine
        if eng.provenance:
            mine = self.prov.setdefault(relation, {})
            for t, (rule, height) in eng._prov.get(name, {}).items():
                if rule >= 0:
                    _, ci = eng.rules[rule]
                    rule = eng._rule_id(self.program, origin[ci])
                mine.setdefault(t, (rule, height))
        return list(eng._data[name])
