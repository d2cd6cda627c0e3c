#!/usr/bin/env python3
"""Time fact extraction (IR -> relations) beyond start-up, per model.

    python benchmarks/facts_bench.py [MODEL.mlir ...]   (default: transformer_L48)

Parsing is timed apart from extraction; the target is extraction of
transformer_L48 (8.4k ops) in under 1 second.
"""
import gc
import statistics
import sys
import time
from pathlib import Path

from sdylog.facts import extract_facts
from sdylog.ir import load_module

from corpus import CORPUS  # noqa: E402


def main(paths):
    paths = paths or [str(CORPUS / "transformer_L48.mlir")]
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


if __name__ == "__main__":
    main(sys.argv[1:])
