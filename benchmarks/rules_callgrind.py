"""One memory-engine load and rules run of a model's propagation facts, for
instruction counts (the machine's timings are noisy; callgrind's are not).

    python benchmarks/rules_callgrind.py MODEL.mlir --stage {captured,load,rules} [--facts CACHE.pickle]

`captured`: the facts only (read from --facts, or captured from the model
and written there); `load`: and loaded into an engine; `rules`: and the
strata the write-back reads evaluated. The difference of two stages' counts
is one step's cost; per layer, (count(L24) - count(L8)) / 16. The C entry
points alone (the rules without their Python driving):

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=db_run \\
        --toggle-collect=db_index_keys --toggle-collect=db_rows \\
        --toggle-collect=db_distinct python benchmarks/rules_callgrind.py \\
        ../shared/corpus/jax/transformer_L8.mlir --stage rules --facts /tmp/L8.pickle
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from propagation_rules_bench import NEEDED, capture_facts  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--stage", choices=("captured", "load", "rules"), default="rules")
    ap.add_argument("--facts", help="a pickle of the captured facts (written when missing)")
    args = ap.parse_args()
    if args.facts and os.path.exists(args.facts):
        with open(args.facts, "rb") as f:
            facts = pickle.load(f)
    else:
        facts = capture_facts(args.model)
        if args.facts:
            with open(args.facts, "wb") as f:
                pickle.dump(facts, f)
    if args.stage == "captured":
        return
    from sdylog.datalog.gc_pause import gc_paused
    from sdylog.datalog.memory_engine import MemoryEngine
    from sdylog.propagation.driver import propagation_program
    program = propagation_program()
    with gc_paused():
        engine = MemoryEngine(program)
        for name, rows in facts.items():
            if name in program.relations and rows:
                engine.load(name, rows)
        if args.stage == "rules":
            engine.run(relations=NEEDED)
    engine.close()


if __name__ == "__main__":
    main()
