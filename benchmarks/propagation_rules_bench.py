"""Propagation rules benchmark: the time to evaluate rules/propagation.dl on
the facts of a real model, and the cost per op.

    python benchmarks/propagation_rules_bench.py [-n RUNS] [--needed] [MODEL.mlir ...]

Default models: the corpus transformers L8, L24 and L48. For each model the
facts are captured once from `sdylog opt MODEL -sdy-propagation-pipeline`
(the facts its propagation run loads, after the import passes), then the
memory engine evaluates the program RUNS times on a fresh engine (median and min of
CPU and wall time). `--needed` evaluates only the strata the write-back
reads (the final_* relations), not the reports' relations (conflicts.dl).
Per-op cost is the median CPU time over the number of ops in the facts: it
should not grow with the model.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from corpus import CORPUS  # noqa: E402
from sdylog.propagation.writeback import WRITE_BACK_RELATIONS as NEEDED  # noqa: E402

DEFAULT_MODELS = [str(CORPUS / f"transformer_L{n}.mlir") for n in (8, 24, 48)]


def captured_engines(path: str, flags: list[str]) -> list[tuple]:
    """(program, facts) of each engine `sdylog opt MODEL FLAGS` makes, the
    facts as it loads them (relation -> rows)."""
    from sdylog.datalog.memory_engine import MemoryEngine
    from sdylog.passes import driver

    captured: list[tuple] = []
    loads_of: dict[int, dict] = {}   # id(engine) -> its loads
    real_init, real_load_all = MemoryEngine.__init__, MemoryEngine.load_all

    def init(self, program=None, **kw):
        real_init(self, program, **kw)
        loads_of[id(self)] = {}
        captured.append((self.program, loads_of[id(self)]))

    def load_all(self, facts):
        facts = {relation: list(rows) for relation, rows in facts.items()}
        for relation, rows in facts.items():
            loads_of[id(self)].setdefault(relation, []).extend(rows)
        real_load_all(self, facts)

    # (at the class: the pipeline's drivers import make_engine by name; load
    # goes through load_all, so patching load_all alone records every load once)
    MemoryEngine.__init__, MemoryEngine.load_all = init, load_all
    try:
        with open(path) as f:
            text = f.read()
        driver.optimize_text(text, path, driver.parse_flags(flags))
    finally:
        MemoryEngine.__init__, MemoryEngine.load_all = real_init, real_load_all
    return captured


def capture_facts(path: str) -> dict[str, list]:
    """The facts the pipeline's propagation run loads into its engine."""
    from sdylog.propagation.driver import propagation_program
    runs = [facts for program, facts in captured_engines(path, ["-sdy-propagation-pipeline"])
            if program is propagation_program()]
    if len(runs) != 1:
        raise SystemExit(f"{path}: expected one propagation run, saw {len(runs)}")
    return runs[0]


def time_engine(program, facts: dict, runs: int, needed: bool):
    from sdylog.datalog import make_engine
    cpu, wall = [], []
    for _ in range(runs):
        e = make_engine(program)
        try:
            for name, rows in facts.items():
                e.load(name, rows)
            w, c = time.perf_counter(), time.process_time()
            e.run(relations=NEEDED if needed else None)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        finally:
            e.close()
    return cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("--needed", action="store_true", help="only the strata the write-back reads")
    args = ap.parse_args()

    from sdylog.propagation.driver import propagation_program
    program = propagation_program()
    print(f"{'model':22} {'ops':>6} {'cpu med':>8} {'cpu min':>8} {'wall med':>8} {'us/op':>7}")
    for path in args.models:
        facts = capture_facts(path)
        ops = len(facts.get("op", ()))
        cpu, wall = time_engine(program, facts, args.runs, args.needed)
        med = statistics.median(cpu)
        print(f"{os.path.basename(path)[:-5]:22} {ops:6d} {med:8.3f} {min(cpu):8.3f} "
              f"{statistics.median(wall):8.3f} {1e6 * med / max(ops, 1):7.1f}", flush=True)


if __name__ == "__main__":
    main()
