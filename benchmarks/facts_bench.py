#!/usr/bin/env python3
"""Time fact extraction (IR -> relations) beyond start-up, per model.

    python benchmarks/facts_bench.py [MODEL.mlir ...]   (default: transformer_L48)
    python benchmarks/facts_bench.py --run [--flags "PASS ..."] [--runs N] [MODEL.mlir ...]

Parsing is timed apart from extraction; the target is extraction of
transformer_L48 (8.4k ops) in under 1 second.

With --run: the facts' share of a warm `sdylog opt` run (default flags
-sdy-propagation-pipeline): the process time the propagation and reshard
phases report for their facts (extracted, or the kept ones followed and
their shardings read again: sdylog/facts/shared.py), per run, beside the
run's own process time (median of --runs warm runs after one cold one).
"""
import argparse
import gc
import statistics
import time
from pathlib import Path

from sdylog.facts import extract_facts
from sdylog.ir import load_module
from sdylog.ir.module import parse_module
from sdylog.passes import PassContext
from sdylog.passes.driver import parse_flags, run_passes

from corpus import CORPUS  # noqa: E402


def extraction(paths):
    for p in paths:
        t = time.perf_counter()
        module = load_module(p)
        parse = time.perf_counter() - t
        runs = []
        for _ in range(5):
            # as propagation runs it: result types checked, the collector paused
            # (process time: other processes on the machine do not count)
            gc.disable()
            t = time.process_time()
            facts = extract_facts(module, p, static_shapes=True)
            runs.append(time.process_time() - t)
            gc.enable()
        n_ops = len(facts.ops)
        n_tuples = sum(len(r) for r in facts.relations.values())
        print(f"{Path(p).name}: {n_ops} ops, {n_tuples} tuples; parse {parse:.3f}s, "
              f"extract median {statistics.median(runs):.3f}s (min {min(runs):.3f}s)")


def facts_in_run(path: str, flags: list[str], runs: int) -> None:
    """The facts' process time per warm run (each phase's), and the run's."""
    inv = parse_flags(flags)
    text = Path(path).read_text()
    per_run = []
    for _ in range(runs + 1):   # (the first, cold, is left out)
        t = time.process_time()
        module = parse_module(text, path)
        ctx = PassContext(filename=path, derive="write-back")   # (as `sdylog opt` runs them)
        with module.context:
            run_passes(module, inv, ctx)
        total = time.process_time() - t
        phases = [(phase, entry["facts"]) for phase in ("propagation", "reshards")
                  for entry in ctx.report.get(phase, ())]
        per_run.append((total, phases))
    warm = per_run[1:]
    total = statistics.median(t for t, _ in warm)
    facts = statistics.median(sum(s for _, s in phases) for _, phases in warm)
    counts = ", ".join(f"{p} x{sum(1 for q, _ in warm[0][1] if q == p)}" for p in ("propagation", "reshards"))
    print(f"{Path(path).name}: run {total * 1e3:.1f} ms, facts {facts * 1e3:.2f} ms "
          f"({facts / total:.0%}; {counts}) [process time, median of {runs} warm runs]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--run", action="store_true", help="the facts' share of warm `sdylog opt` runs")
    parser.add_argument("--flags", default="-sdy-propagation-pipeline", help="the passes of --run")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    paths = args.models or [str(CORPUS / "transformer_L48.mlir")]
    if not args.run:
        extraction(paths)
        return
    for p in paths:
        facts_in_run(p, args.flags.split(), args.runs)


if __name__ == "__main__":
    main()
