#!/usr/bin/env python3
"""Whole-process times of the commands JAX users wait for, each as a ratio
to its anchor measured in the same run (alternating, best of N, wall and
CPU = user + sys of the child):

- `sdylog --help` against `python -c 'import click'` (the CLI's floor);
- `sdylog run MODEL --db F` against `sdylog run MODEL` (issue 19: at most
  1.5x on transformer_L48), the DuckDB file's size, and the time line of
  one more run of each (what --db adds to the pipeline: the phases names
  and ids; the file itself is written after it).

    python benchmarks/cli_bench.py [-n 5] [--db-only] [MODEL ...]

MODEL defaults to examples/mlp.mlir and the corpus' transformer_L48.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import CORPUS

ROOT = Path(__file__).resolve().parents[1]
SDYLOG = [sys.executable, "-m", "sdylog.cli"]


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(pairs: dict[str, list[str]], n: int, before=None) -> dict[str, tuple[float, float]]:
    """Min wall and min CPU of each command, the commands alternating."""
    out = {k: (float("inf"), float("inf")) for k in pairs}
    for _ in range(n):
        for k, cmd in pairs.items():
            if before:
                before()
            w, c = timed(cmd)
            out[k] = (min(out[k][0], w), min(out[k][1], c))
    return out


def line(name: str, t: tuple[float, float], anchor: tuple[float, float]) -> str:
    return (f"  {name:28} wall {t[0]:.3f}s ({t[0] / anchor[0]:.2f}x)   "
            f"cpu {t[1]:.3f}s ({t[1] / anchor[1]:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--db-only", action="store_true", help="leave out sdylog --help")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    models = args.models or [str(ROOT / "examples" / "mlp.mlir"), str(CORPUS / "transformer_L48.mlir")]

    if not args.db_only:
        r = best({"click": [sys.executable, "-c", "import click"], "help": SDYLOG + ["--help"]}, args.n)
        print("sdylog --help")
        print(line("python -c 'import click'", r["click"], r["click"]))
        print(line("sdylog --help", r["help"], r["click"]))

    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "r.duckdb")

        def fresh():
            if os.path.exists(db):
                os.remove(db)
        for model in models:
            cmds = {"run": SDYLOG + ["run", model, "-q", "-o", os.devnull],
                    "run --db": SDYLOG + ["run", model, "-q", "-o", os.devnull, "--db", db]}
            r = best(cmds, args.n, before=fresh)
            print(f"{Path(model).name}: --db file {os.path.getsize(db) / 1e6:.2f} MB")
            print(line("run", r["run"], r["run"]))
            print(line("run --db", r["run --db"], r["run"]))
            for name, cmd in cmds.items():   # (one run each, not timed: its report's last line)
                fresh()
                report = subprocess.run([c for c in cmd if c != "-q"], check=True, capture_output=True, text=True)
                print(f"    {name + ':':10} {report.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
