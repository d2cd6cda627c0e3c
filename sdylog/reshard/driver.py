"""One run of the reshard rules: facts in, rules evaluated once.

The rules (rules/reshard.dl) decide every reshard and collective; this
module chooses what the run does (the pass options become run_option
facts), adds the facts only these rules read, and returns the engine with
the derived relations for the writer (sdylog/reshard/writer.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache

from sdylog import RULES_DIR

PROGRAM_FILE = RULES_DIR / "reshard.dl"


@dataclass(frozen=True)
class ReshardOptions:
    full_version: bool = False     # Shardy's enable-full-version


@dataclass
class ReshardDecisions:
    engine: object                 # the Datalog engine, holding every input and derived relation
    facts: object                  # the FactSet (ids back to IR ops and values)
    timings: dict = field(default_factory=dict)


@lru_cache(maxsize=1)
def reshard_program():
    from sdylog.datalog import load_program
    from sdylog.datalog.cache import load_program_cached
    return load_program_cached(str(PROGRAM_FILE), load_program)


def run_facts(options: ReshardOptions, facts) -> dict[str, list[tuple]]:
    """The facts that tell the rules what this run does, and those of the
    module only these rules read."""
    return {
        "run_option": [("full", int(options.full_version))],
        "mesh_position": [(name, i) for i, name in enumerate(facts.mesh_symbols)],
        "ranked_value": facts.ranked_values(),
    }


def decide(module, options: ReshardOptions, ctx=None) -> ReshardDecisions:
    """Evaluate the reshard rules on `module` (not changed here)."""
    from sdylog.datalog import make_engine
    from sdylog.datalog.engines import propagation_engine
    from sdylog.datalog.gc_pause import gc_paused
    from sdylog.facts.extract import extract_facts
    from sdylog.reshard.writer import WRITER_RELATIONS

    filename = getattr(ctx, "filename", "-")
    timings: dict[str, float] = {}
    t0 = time.process_time()
    with gc_paused(promote_survivors=True), module.context:
        facts = extract_facts(module, filename, strict_rules=True, names_within=_shared_census_within(module, ctx))
        t1 = time.process_time()
        timings["facts"] = t1 - t0
        program = reshard_program()
        engine = make_engine(program, propagation_engine(getattr(ctx, "engine", None)),
                             provenance=bool(getattr(ctx, "provenance", False)))
        inputs = set(program.relations)
        for name, rows in list(facts.relations.items()) + list(run_facts(options, facts).items()):
            if name in inputs and rows:
                engine.load(name, rows)
        t2 = time.process_time()
        timings["load"] = t2 - t1
        wanted = WRITER_RELATIONS if getattr(ctx, "derive", "all") == "write-back" else None
        engine.run(relations=wanted)
        timings["rules"] = time.process_time() - t2
    return ReshardDecisions(engine, facts, timings)


def _shared_census_within(module, ctx):
    """The pipeline's census of the module's ops, when one is shared (the
    facts then read its op lists instead of walking)."""
    if getattr(ctx, "census", None) is None:
        return None
    from sdylog.passes.census import census
    return census(module, ctx).within_and_names
