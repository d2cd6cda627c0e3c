"""One propagation run: facts in, rules evaluated once, shardings written back.

The rules decide every sharding; this module only chooses what the run does
(the pass options become run_flag / run_strategy facts), loads the facts,
and writes the derived `final_*` relations into the module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sdylog import RULES_DIR
from sdylog.datalog.engines import make_engine   # (loaded with the pass: the first run imports nothing)
from sdylog.datalog.cache import rule_program
from sdylog.datalog.gc_pause import gc_paused
from sdylog.datalog.memory_engine import merged_facts
from sdylog.facts.shared import module_facts
from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.types import unpropagatable_type_error
from sdylog.ir.walk import walk_ops
from sdylog.passes import phase_clock
from sdylog.propagation.writeback import WRITE_BACK_RELATIONS, write_back

PROGRAM_FILE = RULES_DIR / "propagation.dl"
STRATEGIES = ("basic", "aggressive")


@dataclass(frozen=True)
class PropagationOptions:
    strategies: tuple[str, ...] = ("aggressive",)   # factor strategies of each step, in order
    op_priorities: bool = False     # the five op-priority steps (else one step, every direction)
    user_priorities: bool = False   # dimension priorities in rounds
    conservative: bool = False      # no sub-axes, rules built conservatively
    keep_sharding_rules: bool = False


@dataclass
class PropagationResult:
    engine: object                  # the Datalog engine, holding every input and derived relation
    facts: object                   # the FactSet (ids back to IR ops and values)
    timings: dict = field(default_factory=dict)


def propagation_program():
    return rule_program(str(PROGRAM_FILE))


def run_facts(options: PropagationOptions) -> dict[str, list[tuple]]:
    """The facts that tell the rules what this run does."""
    for s in options.strategies:
        if s not in STRATEGIES:
            raise SdylogError(f"unknown propagation strategy '{s}' (choose from {', '.join(STRATEGIES)})")
    return {
        "run_flag": [("user_priorities", int(options.user_priorities)),
                     ("op_priorities", int(options.op_priorities)),
                     ("conservative", int(options.conservative))],
        "run_strategy": list(enumerate(options.strategies)),
    }


def check_static_shapes(module, filename: str) -> None:
    """Shardy propagates only statically shaped ranked tensors, and no tuples:
    the first op result (pre-order) of another type is an error."""
    for op in walk_ops(module.operation):
        for r in op.results:
            error = unpropagatable_type_error(r.type)
            if error is not None:
                raise error_at(op, error, filename)


def propagate(module, options: PropagationOptions, ctx=None) -> PropagationResult:
    """Propagate shardings through `module` in place; returns the engine with
    the derived relations (all of them, or only the write-back's with
    ctx.derive == "write-back"), the facts, and per-step timings (also added
    to ctx.report["propagation"]; zeros when ctx.timed is off)."""
    # (the facts and the engine's tuples outlive the run: promoted, see gc_paused)
    with gc_paused(promote_survivors=True):
        return _propagate(module, options, ctx)


def _propagate(module, options: PropagationOptions, ctx) -> PropagationResult:
    filename = getattr(ctx, "filename", "-")
    timings: dict[str, float] = {}
    clock = phase_clock(ctx)
    t0 = clock()
    with module.context:
        try:   # (the extraction checks the result types as it reads them: no walk of its own)
            facts = module_facts(module, ctx, conservative=options.conservative, static_shapes=True)
        except SdylogError:
            check_static_shapes(module, filename)   # a type error comes first, wherever it is
            raise
    t1 = clock()
    timings["facts"] = t1 - t0
    program = propagation_program()
    engine = make_engine(program, provenance=bool(getattr(ctx, "provenance", False)))
    wanted = WRITE_BACK_RELATIONS if getattr(ctx, "derive", "all") == "write-back" else None
    engine.load_all(merged_facts(program.relations, facts.relations, run_facts(options)))
    t2 = clock()
    timings["load"] = t2 - t1
    engine.run(relations=wanted)
    t3 = clock()
    timings["rules"] = t3 - t2
    with module.context:
        write_back(module, engine, facts, options)
    timings["write_back"] = clock() - t3
    if ctx is not None and hasattr(ctx, "report"):
        ctx.report.setdefault("propagation", []).append(dict(timings))
    return PropagationResult(engine, facts, timings)
