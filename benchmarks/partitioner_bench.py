#!/usr/bin/env python3
"""sdylog against Shardy, in-process, as ratios measured in the same run:
issue 18's export figure and the partitioner passes.

    python benchmarks/partitioner_bench.py [--runs N] [--rounds R] [--work DIR] [MODEL.mlir ...]
    (default models: every model of the corpus)

Two figures per model, each side in fresh processes of its own (cold: the
first call of a process; warm: the best of N further calls), as ratios
sdylog/Shardy measured in the same run:

- export: issue 18's figure, the JAX export through
  `-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true`
  (what ../shared/bench/propagation_inprocess.py --pipeline "..." times),
  text to text: propagation, reshards, collectives, both sides sdylog's own
  or Shardy's own from start to end;
- partitioner: the partitioner passes on one benchmark input, as a pipeline
  and pass by pass (below).

Benchmark input (made here, for the benchmark only): each model after
Shardy's `-sdy-propagation-pipeline` and then Shardy's
`-sdy-insert-explicit-reshards='enable-full-version=true'`, both run by the
oracle in jaxlib (../shared/conformance/shardy_ref_opt.py), so that the
partitioner passes have reshards and all-reduces to lower whether or not
sdylog's own insert-explicit-reshards has landed. sdylog's product code never
runs Shardy; this script does, to make inputs and to time the anchor.

The passes are those of partitioning.md 1.2 (the executable partitioner
tests' pipeline after insert-explicit-reshards), with the export pipeline's
collective canonicalization after reshard-to-collectives:

    resolve-permutation-factors, reshard-to-collectives, canonicalize{sdy-collective},
    pad-for-divisibility, resolve-single-device-sharding, convert-global-to-local,
    drop-sharding-and-mesh

Whole pipeline: text in, parse, every pass, printed text out (`sdylog opt`
with the pass flags against a PassManager of the same passes). cold: the
first call in a fresh process (imports not timed; what one `sdylog opt`
pays beyond start-up); warm: the best of N further calls, in wall and in
CPU time (on a shared machine the CPU time is the steadier). Per pass: each
pass runs on what the passes before it produced (sdylog's output; the
script checks that Shardy's output of each pass is the same text), parsed
beforehand and not timed; timed (warm): the pass and the verification its
pass manager does after it (sdylog: `sdylog opt`'s run_passes; Shardy: a
PassManager). jaxlib has no -sdy-resolve-single-device-sharding: Shardy's
side leaves it out (on these models it has nothing to do), and sdylog's
time for it is shown without a ratio. Each side runs in fresh processes,
taking turns; Python's byte code is cached (as an installed sdylog's is),
in the work directory. Shardy's side makes its MLIR context once, untimed
(as ../shared/bench/propagation_inprocess.py does); sdylog makes one per
call (2 ms).

"evals" is the number of rule evaluations (engine runs) sdylog makes in one
whole-pipeline call: it must not grow with the model's depth.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus import CORPUS  # noqa: E402

DEFAULT_MODELS = ["shard_map_mlp", "mlp", "mlp_grad", "convnet", "embed_gather", "scan_rnn",
                  "transformer_L2", "transformer_L8", "transformer_L24", "transformer_L48"]
# Issue 18's figure: Shardy's export pipeline with explicit collectives, from a JAX export.
EXPORT = ["-sdy-propagation-pipeline", "-sdy-export-pipeline=enable-insert-explicit-collectives=true"]
ORACLE = CORPUS.parents[1] / "conformance" / "shardy_ref_opt.py"
INPUT_PASSES = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
# (label, flag): the pipeline's passes, in order.
PASSES = [
    ("resolve-permutation-factors", "-sdy-resolve-permutation-factors"),
    ("reshard-to-collectives", "-sdy-reshard-to-collectives"),
    ("canonicalize", "-canonicalize=enable-patterns=sdy-collective,top-down=false"),
    ("pad-for-divisibility", "-sdy-pad-for-divisibility"),
    ("resolve-single-device-sharding", "-sdy-resolve-single-device-sharding"),
    ("convert-global-to-local", "-sdy-convert-global-to-local"),
    ("drop-sharding-and-mesh", "-sdy-drop-sharding-and-mesh"),
]
NOT_IN_JAXLIB = {"-sdy-resolve-single-device-sharding"}
# The whole pipeline: partitioning.md 1.2 (no canonicalizer between the passes).
WHOLE = [flag for label, flag in PASSES if label != "canonicalize"]

# Runs in a fresh process per side: {"passes": [[flag, input path]...], "whole": [flags, input path], "runs": N}
_CHILD = r'''
import json, sys, time
kind, job = sys.argv[1], json.loads(sys.argv[2])
runs = job["runs"]
t0 = time.perf_counter()
if kind == "sdylog":
    from sdylog.passes import PassContext
    from sdylog.passes.driver import optimize_text, parse_flags, run_passes
    from sdylog.ir import parse_module
    from sdylog.datalog import memory_engine
    evals = [0]
    engine_run = memory_engine.MemoryEngine.run
    def counted_run(self, *a, **k):
        evals[0] += 1
        return engine_run(self, *a, **k)
    memory_engine.MemoryEngine.run = counted_run

    def prepare(flags, text, path):
        inv = parse_flags(flags)
        module = parse_module(text, path)
        def timed():
            with module.context:
                run_passes(module, inv, PassContext(filename=path, derive="write-back"))
        return timed

    def whole(flags, text, path):
        inv = parse_flags(flags)
        return lambda: optimize_text(text, path, inv)
else:
    import re
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir, passmanager
    context = jmlir.make_ir_context()
    context.allow_unregistered_dialects = True

    def pass_manager(flags):
        specs = []
        for f in flags:
            m = re.fullmatch(r"--?([a-z0-9-]+)(?:=(.*))?", f)
            name, opts = m.group(1), m.group(2)
            specs.append(f"{name}{{{opts.replace(',', ' ')}}}" if opts else name)
        nested = []
        with context:
            for spec in specs:   # (a pass on functions nests under func.func)
                try:
                    passmanager.PassManager.parse(f"builtin.module({spec})")
                    nested.append(spec)
                except ValueError:
                    nested.append(f"func.func({spec})")
            return passmanager.PassManager.parse("builtin.module(" + ",".join(nested) + ")")

    def prepare(flags, text, path):
        pm = pass_manager(flags)
        with context:
            module = ir.Module.parse(text)
        def timed():
            with context:
                pm.run(module.operation)
        return timed

    def whole(flags, text, path):
        pm = pass_manager(flags)
        def once():
            with context:
                module = ir.Module.parse(text)
                pm.run(module.operation)
                return str(module)
        return once

def clock(make):
    """(cold, warm, warm CPU): the first call's wall time; the best of
    `runs` more, each on a fresh input, in wall and in CPU time."""
    wall, cpu = [], []
    for _ in range(runs + 1):
        fn = make()
        if kind == "sdylog":
            evals[0] = 0   # (after the loop: the last call's)
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall[0], min(wall[1:]), min(cpu[1:])

imports = time.perf_counter() - t0
out = {"imports": imports, "passes": {}, "whole": None}
if job["whole"]:
    flags, path = job["whole"]
    text = open(path).read()
    out["whole"] = clock(lambda: whole(flags, text, path))   # (first: its first call is the cold one)
    if kind == "sdylog":
        out["evals"] = evals[0]
for flag, path in job["passes"]:
    text = open(path).read()
    out["passes"][flag] = clock(lambda: prepare([flag], text, path))[1:]
print(json.dumps(out))
'''


class Failed(Exception):
    """A command the benchmark runs failed (its message: the command and stderr's tail)."""


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise Failed(f"{' '.join(args[:4])} ...\n{p.stderr[-2000:]}")
    return p


def benchmark_input(model: Path, work: Path) -> Path:
    """The model after Shardy's propagation pipeline and insert-explicit-reshards
    (the oracle's, for this benchmark only), cached in `work`."""
    out = work / f"{model.stem}.explicit.mlir"
    if not out.exists():
        text = model.read_text()
        for flag in INPUT_PASSES:
            text = _run([sys.executable, str(ORACLE), "-", flag], input=text).stdout
        out.write_text(text)
    return out


def stage_inputs(model_input: Path, work: Path) -> list[tuple[str, str, Path, str]]:
    """(label, flag, input of the pass, whether Shardy prints what sdylog
    prints: "yes", "NO", "not in jaxlib" or "Shardy fails") per pass: the
    input of each is sdylog's output of the passes before it."""
    stages, current = [], model_input
    for i, (label, flag) in enumerate(PASSES):
        out = work / f"{model_input.stem}.after-{i}-{label}.mlir"
        mine = _run(["sdylog", "opt", str(current), flag]).stdout
        out.write_text(mine)
        if flag in NOT_IN_JAXLIB:
            same = "not in jaxlib"
        else:
            try:
                theirs = _run([sys.executable, str(ORACLE), str(current), flag]).stdout
                same = "yes" if theirs.strip() == mine.strip() else "NO"
            except Failed:
                same = "Shardy fails"
        stages.append((label, flag, current, same))
        current = out
    return stages


def side(kind: str, job: dict, work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    p = _run([sys.executable, "-c", _CHILD, kind, json.dumps(job)], env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def sides(jobs: dict, rounds: int, work: Path) -> dict:
    """Each side's figures, the best of `rounds` fresh processes per side, the
    sides taking turns (on a shared machine the load drifts)."""
    best: dict = {}
    for _ in range(rounds):
        for kind, job in jobs.items():
            got = side(kind, job, work)
            if kind not in best:
                best[kind] = got
                continue
            mine = best[kind]
            mine["imports"] = min(mine["imports"], got["imports"])
            if got["whole"]:
                mine["whole"] = [min(a, b) for a, b in zip(mine["whole"], got["whole"])]
            for flag, times in got["passes"].items():
                mine["passes"][flag] = [min(a, b) for a, b in zip(mine["passes"][flag], times)]
    return best


def _cells(mine, theirs) -> str:
    """Milliseconds of each side and their ratio, per clock (cold, warm, warm CPU)."""
    cells = ""
    for i, m in enumerate(mine):
        t = theirs[i] if theirs else None
        cells += (f" {'':23s} " if m is None else f" {m * 1e3:7.1f} {'-':>7s} {'-':>7s} " if t is None
                  else f" {m * 1e3:7.1f} {t * 1e3:7.1f} {m / t:7.2f} ")
    return cells


_HEADER = (f"{'':32s} {'cold (wall, ms)':^24s} {'warm (wall, ms)':^24s} {'warm (CPU, ms)':^24s}\n"
           f"{'':32s}" + f" {'sdylog':>7s} {'shardy':>7s} {'ratio':>7s} " * 3)


def export_figure(model: Path, runs: int, rounds: int, work: Path) -> tuple | None:
    """Issue 18's figure for `model`: (sdylog's, Shardy's (cold, warm, warm
    CPU), sdylog's rule evaluations per run), printed; None when a side fails."""
    job = {"runs": runs, "whole": [EXPORT, str(model)], "passes": []}
    try:
        got = sides({"sdylog": job, "shardy": job}, rounds, work)
    except Failed as e:
        print(f"-- export pipeline: fails: {e}")
        return None
    a, b = got["sdylog"], got["shardy"]
    print(f"-- export pipeline, from the JAX export ({' '.join(EXPORT)}); "
          f"rule evaluations per run: {a['evals']}")
    print(_HEADER)
    print(f"{'export pipeline (text to text)':32s}{_cells(a['whole'], b['whole'])}")
    return a["whole"], b["whole"], a["evals"]


def partitioner_figure(model: Path, runs: int, rounds: int, work: Path) -> tuple | None:
    """The partitioner passes on `model`'s benchmark input, pass by pass and
    as a pipeline, printed: (sdylog's, Shardy's (cold, warm, warm CPU) or
    None when Shardy fails on a pass, evaluations); None when sdylog fails."""
    try:
        stages = stage_inputs(benchmark_input(model, work), work)
    except Failed as e:
        print(f"-- partitioner passes: fails: {e}")
        return None
    model_input = stages[0][2]
    shardy_runs = all(same in ("yes", "NO", "not in jaxlib") for *_, same in stages)
    job = {"runs": runs, "whole": [WHOLE, str(model_input)],
           "passes": [[flag, str(path)] for _, flag, path, _ in stages]}
    shardy_job = {**job, "whole": [[f for f in WHOLE if f not in NOT_IN_JAXLIB], str(model_input)]
                  if shardy_runs else None,
                  "passes": [[flag, str(path)] for _, flag, path, same in stages if same in ("yes", "NO")]}
    got = sides({"sdylog": job, "shardy": shardy_job}, rounds, work)
    a, b = got["sdylog"], got["shardy"]
    print(f"-- partitioner passes on Shardy's propagation + insert-explicit-reshards; "
          f"rule evaluations per run: {a['evals']}")
    print(_HEADER + " same output")
    # (label, sdylog's and Shardy's (cold, warm, warm CPU), same output); no cold per pass
    rows = [(label, (None, *a["passes"][flag]),
             (None, *b["passes"][flag]) if flag in b["passes"] else None, same)
            for label, flag, _, same in stages]
    rows.append(("whole pipeline (text to text)", a["whole"], b["whole"],
                 "" if shardy_runs else "(Shardy fails on a pass)"))
    for label, mine, theirs, same in rows:
        print(f"{label:32s}{_cells(mine, theirs)} {same}")
    return a["whole"], b["whole"], a["evals"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="warm calls per process (the best counts)")
    ap.add_argument("--rounds", type=int, default=2, help="processes per side, taking turns (the best counts)")
    ap.add_argument("--work", type=Path, help="where the benchmark inputs are kept (default: a temporary directory)")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    models = [Path(m) for m in args.models] or [CORPUS / f"{m}.mlir" for m in DEFAULT_MODELS]
    work = args.work or Path(tempfile.mkdtemp(prefix="partitioner_bench."))
    work.mkdir(parents=True, exist_ok=True)
    print(f"benchmark inputs (Shardy's propagation pipeline + insert-explicit-reshards, oracle): {work}")
    summary = []
    for model in models:
        print(f"== {model.name}")
        figures = [export_figure(model, args.runs, args.rounds, work),
                   partitioner_figure(model, args.runs, args.rounds, work)]
        summary.append((model.stem, figures))
    print("\nratio sdylog/shardy (cold: the first call of a process, wall; warm: the best of "
          f"{args.runs} more, wall and CPU), rule evaluations per run")
    print(f"{'model':20s} {'export: cold':>12s} {'warm':>6s} {'CPU':>6s} {'evals':>5s}  "
          f"{'partitioner: cold':>17s} {'warm':>6s} {'CPU':>6s} {'evals':>5s}")
    for name, figures in summary:
        line = f"{name:20s}"
        for fig, width in zip(figures, (12, 17)):
            if fig is None or fig[1] is None:
                line += f" {'fails' if fig is None else 'Shardy fails':>{width}s} {'':13s} {fig[2] if fig else '':>5} "
            else:
                mine, theirs, evals = fig
                line += f" {mine[0] / theirs[0]:{width}.2f} {mine[1] / theirs[1]:6.2f} {mine[2] / theirs[2]:6.2f} {evals:5d} "
        print(line)


if __name__ == "__main__":
    main()
