#!/usr/bin/env python3
"""Wall time of each step of `sdylog opt MODEL -sdy-propagation-pipeline`,
median of several runs, each run in a fresh process (as the CLI runs).

    python benchmarks/pipeline_steps_bench.py [--runs N] [MODEL.mlir ...]
    (default models: transformer_L8, transformer_L24, transformer_L48)
    PYTHONPATH=/path/to/an/older/checkout python benchmarks/pipeline_steps_bench.py ...
    times that checkout instead.

Steps: parse, print, each pass of the import and export sequences,
verification, and inside propagation: the static-shape check, fact
extraction, the rule evaluation (engine.run, not ours to speed up here),
write-back and populating sharding rules. "not rules" is everything after
imports except the rule evaluation; "per op" divides it by the op count
(it should not grow with the model).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from corpus import CORPUS  # noqa: E402
DEFAULT_MODELS = ["transformer_L8", "transformer_L24", "transformer_L48"]

# Runs in the child process: patch timers around the steps, run the pipeline once.
_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from sdylog.passes import driver, pipelines
from sdylog.ir import module as ir_module
from sdylog.propagation import driver as pdriver, writeback
from sdylog.facts import extract
from sdylog.passes import populate_op_sharding_rules as populate
import sdylog.datalog as datalog
times = {"(imports)": time.perf_counter() - t0}

cpu = {}

def timed(key, fn):
    def wrapped(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            name = key(*a) if callable(key) else key
            times[name] = times.get(name, 0.0) + time.perf_counter() - t
            cpu[name] = cpu.get(name, 0.0) + time.process_time() - c
    return wrapped

pipelines._run_step = timed(lambda m, c, s, *r: s.name, pipelines._run_step)
for mod in (pipelines, driver, ir_module):
    if hasattr(mod, "verify_module"):
        mod.verify_module = timed("(verify)", mod.verify_module)
driver.parse_module = timed("(parse)", driver.parse_module)
driver.print_module = timed("(print)", driver.print_module)
pdriver.check_static_shapes = timed("propagation: static-shape check", pdriver.check_static_shapes)
extract.extract_facts = timed("propagation: facts", extract.extract_facts)
writeback.write_back = timed("propagation: write-back", writeback.write_back)
if hasattr(populate, "populate_rules"):
    populate.populate_rules = timed("propagation: populate-op-sharding-rules", populate.populate_rules)
else:   # before populate_rules existed (to compare with older commits through PYTHONPATH)
    populate.run = timed("propagation: populate-op-sharding-rules", populate.run)
pdriver._propagate = timed("propagation: total", pdriver._propagate)
make_engine = datalog.make_engine
def make_timed_engine(*a, **k):
    engine = make_engine(*a, **k)
    engine.run = timed("propagation: rules (engine.run)", engine.run)
    return engine
datalog.make_engine = make_timed_engine

text = open(sys.argv[1]).read()
inv = driver.parse_flags(["-sdy-propagation-pipeline"])
t, c = time.perf_counter(), time.process_time()
out = driver.optimize_text(text, sys.argv[1], inv)
times["(total after imports)"] = time.perf_counter() - t
cpu["(total after imports)"] = time.process_time() - c
times["(ops in output)"] = out.count(" = ") + out.count("return ")
print(json.dumps({"wall": times, "cpu": cpu}))
"""


def run_once(model: Path) -> tuple[dict, dict]:
    """(wall seconds, CPU seconds) by step."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(model)], check=True,
                         capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    return got["wall"], got["cpu"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--min", type=float, default=0.005, help="hide steps under this many seconds")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    models = [Path(m) for m in args.models] or [CORPUS / f"{m}.mlir" for m in DEFAULT_MODELS]
    for model in models:
        runs = [run_once(model) for _ in range(args.runs)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        keys = {k for r in walls for k in r}
        med = {k: statistics.median(r.get(k, 0.0) for r in walls) for k in keys}
        med_cpu = {k: statistics.median(r.get(k, 0.0) for r in cpus) for k in keys}
        ops = med.pop("(ops in output)")
        print(f"== {model.name}: median of {args.runs} runs, ~{ops:.0f} ops in the output")
        print("    wall       cpu  step")
        for k, v in sorted(med.items(), key=lambda kv: -kv[1]):
            if v >= args.min:
                print(f"{v:8.3f}s {med_cpu.get(k, 0.0):8.3f}s  {k}")
        rules = "propagation: rules (engine.run)"
        not_rules = med["(total after imports)"] - med.get(rules, 0.0)
        not_rules_cpu = med_cpu["(total after imports)"] - med_cpu.get(rules, 0.0)
        print(f"{not_rules:8.3f}s {not_rules_cpu:8.3f}s  (not rules: total after imports - engine.run)")
        print(f"{1e6 * not_rules / ops:8.1f}us {1e6 * not_rules_cpu / ops:7.1f}us  (not rules, per op)")


if __name__ == "__main__":
    main()
