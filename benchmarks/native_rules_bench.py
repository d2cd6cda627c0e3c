"""Native vs Python rule evaluation: the propagation rules on the facts of
real models, with the C extension (sdylog.datalog._native: relations held
in C, plain, recursive and rank-ordered strata evaluated there) and without
it (SDYLOG_NATIVE=0: Python sets and compiled Python).

    python benchmarks/native_rules_bench.py [-n RUNS] [--strata K] [MODEL.mlir ...]

Default models: the corpus transformers L8 and L48. For each model the facts
are captured once (propagation_rules_bench.capture_facts), then the memory
engine loads them and evaluates the strata the write-back reads RUNS times
per mode; the minimum CPU time is printed for loading the facts, for all the
rules, and for the rank-ordered stratum alone (plan + waves); with --strata,
the K strata that cost most with the extension (min CPU s per stratum, each
offered to C alone; an index is built by the first stratum that reads it).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from corpus import CORPUS  # noqa: E402
from propagation_rules_bench import NEEDED, capture_facts  # noqa: E402

DEFAULT_MODELS = [str(CORPUS / f"transformer_L{n}.mlir") for n in (8, 48)]


def time_rules(program, facts: dict, native: bool, strata: dict) -> tuple[float, float, float]:
    """CPU seconds of one run: loading the facts, all rules, and the rank-ordered
    strata; strata: stratum relations -> [CPU seconds] (C or Python), appended to.
    With the extension each stratum is offered to C alone (NativeDB.batch = 1:
    one db.run call per stratum, as timed here; a whole run is one call
    otherwise, a few percent cheaper)."""
    from sdylog.datalog import memory_engine
    from sdylog.datalog.gc_pause import gc_paused
    from sdylog.datalog.memory_engine import MemoryEngine
    os.environ["SDYLOG_NATIVE"] = "1" if native else "0"
    ranked = [0.0]

    def record(stratum, seconds):
        strata.setdefault(stratum.relations, []).append(seconds)
        if stratum.subsumptive:
            ranked[0] += seconds

    def in_c(ndb, indexes, prog, todo, changed, frees=None):
        ndb.batch = 1
        t = time.process_time()
        rounds, aborted = real_c(ndb, indexes, prog, todo, changed, frees)
        if rounds:
            record(todo[0], time.process_time() - t)
        return rounds, aborted

    def in_python(self, prog, todo, freed=None):
        t = time.process_time()
        in_c_count, ran = real_next(self, prog, todo, freed)
        if ran > in_c_count:   # (the stratum after those C ran went to Python)
            record(todo[in_c_count], time.process_time() - t)
        return in_c_count, ran
    real_c, real_next = memory_engine.run_strata, MemoryEngine._run_next
    memory_engine.run_strata = in_c
    MemoryEngine._run_next = in_python
    try:
        with gc_paused():
            t = time.process_time()
            e = MemoryEngine(program)
            e.load_all({name: rows for name, rows in facts.items() if name in program.relations and rows})
            load = time.process_time() - t
            t = time.process_time()
            e.run(relations=NEEDED)
            total = time.process_time() - t
        e.close()
    finally:
        memory_engine.run_strata, MemoryEngine._run_next = real_c, real_next
    return load, total, ranked[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("--strata", type=int, default=0, metavar="K", help="print the K costliest strata (native)")
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    args = ap.parse_args()
    from sdylog.datalog.native_plan import _native
    from sdylog.propagation.driver import propagation_program
    if _native is None:
        raise SystemExit("the C extension sdylog.datalog._native is not built")
    program = propagation_program()
    print(f"{'model':<20} {'mode':<7} {'load':>6} {'all rules':>10} {'ranked':>8} {'other':>8}   "
          f"(min CPU s of {args.runs})")
    for path in args.models:
        facts = capture_facts(path)
        for native in (False, True):
            strata: dict = {}
            runs = [time_rules(program, facts, native, strata) for _ in range(args.runs)]
            load, total, rank = (min(r[i] for r in runs) for i in range(3))
            other = min(r[1] - r[2] for r in runs)
            print(f"{os.path.basename(path):<20} {'native' if native else 'python':<7} {load:>6.3f} {total:>10.3f} "
                  f"{rank:>8.3f} {other:>8.3f}")
        for relations, times in sorted(strata.items(), key=lambda kv: -min(kv[1]))[:args.strata]:
            # (a stratum run in C and handed back to Python counts both)
            print(f"    {min(times):.4f}  {', '.join(relations)}")
    os.environ.pop("SDYLOG_NATIVE", None)


if __name__ == "__main__":
    main()
