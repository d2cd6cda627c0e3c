"""The rank-ordered stratum of the propagation rules, split into its planning
(Python: RankedEvaluation.run without the C call) and its waves in C
(sdylog.datalog._native.ranked_run), per model and per layer.

    python benchmarks/ranked_split_bench.py [-n RUNS] [MODEL.mlir ...]

Default models: the corpus transformers L8 and L48. For each model the facts
are captured once (propagation_rules_bench.capture_facts), then the memory
engine evaluates the strata the write-back reads RUNS times with the C
extension; the minimum CPU time of each part is printed, and for two or
more models the cost per layer between the first two (their file names end
in L<layers>). For instruction counts of the C part alone:

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=ranked_run \\
        python benchmarks/rules_callgrind.py MODEL.mlir --stage rules --facts CACHE.pickle
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from corpus import CORPUS  # noqa: E402
from propagation_rules_bench import NEEDED, capture_facts  # noqa: E402

DEFAULT_MODELS = [str(CORPUS / f"transformer_L{n}.mlir") for n in (8, 48)]


class _TimedNative:
    """The C extension, its ranked_run timed (CPU seconds into `spent`)."""

    def __init__(self, native, spent: list):
        self._native = native
        self._spent = spent

    def __getattr__(self, name):
        return getattr(self._native, name)

    def ranked_run(self, *args):
        t = time.process_time()
        try:
            return self._native.ranked_run(*args)
        finally:
            self._spent[0] += time.process_time() - t


def time_ranked(program, facts: dict) -> tuple[float, float]:
    """CPU seconds of one rules run's rank-ordered strata: (all, in C)."""
    from sdylog.datalog import ranked
    from sdylog.datalog.gc_pause import gc_paused
    from sdylog.datalog.memory_engine import MemoryEngine
    from sdylog.datalog.native_plan import _native
    total, in_c = [0.0], [0.0]
    real_run, real_module = ranked.RankedEvaluation.run, ranked.native_module

    def run(self):
        t = time.process_time()
        try:
            return real_run(self)
        finally:
            total[0] += time.process_time() - t
    ranked.RankedEvaluation.run = run
    ranked.native_module = lambda: _TimedNative(_native, in_c)
    try:
        with gc_paused():
            e = MemoryEngine(program)
            for name, rows in facts.items():
                if name in program.relations and rows:
                    e.load(name, rows)
            e.run(relations=NEEDED)
        e.close()
    finally:
        ranked.RankedEvaluation.run, ranked.native_module = real_run, real_module
    return total[0], in_c[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--runs", type=int, default=5)
    ap.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    args = ap.parse_args()
    from sdylog.datalog.native_plan import _native
    from sdylog.propagation.driver import propagation_program
    if _native is None:
        raise SystemExit("the C extension sdylog.datalog._native is not built")
    program = propagation_program()
    print(f"{'model':<22} {'ranked':>8} {'C waves':>8} {'planning':>9}   (min CPU ms of {args.runs})")
    rows = []
    for path in args.models:
        facts = capture_facts(path)
        runs = [time_ranked(program, facts) for _ in range(args.runs)]
        best = (min(r[0] for r in runs), min(r[1] for r in runs), min(r[0] - r[1] for r in runs))
        rows.append((path, best))
        print(f"{os.path.basename(path):<22} " + " ".join(f"{1000 * v:>8.2f}" for v in best))
    layers = [re.search(r"L(\d+)\.mlir$", p) for p, _ in rows[:2]]
    if len(rows) >= 2 and all(layers):
        n = int(layers[1].group(1)) - int(layers[0].group(1))
        per = [(b - a) / n for a, b in zip(rows[0][1], rows[1][1])]
        print(f"{'per layer':<22} " + " ".join(f"{1000 * v:>8.3f}" for v in per))


if __name__ == "__main__":
    main()
