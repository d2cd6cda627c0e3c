#!/usr/bin/env python3
"""A long differential run by hand: generated programs, sdylog against Shardy.

    python tests/generators/vs_shardy.py [--programs N] [--ops 20,100,300]
        [--seed S] [--flags "-sdy-propagation-pipeline"] [--reshards 0|1]
        [--save DIR] [--show K]

For each size (ops emitted in @main), N programs from seeds S, S+1, ...
(random_program: the same programs on every run). Prints per size the
programs compared, those where every value agrees (and every reshard, when
compared), the share of values that agree, sdylog's failures (each one a
bug: Shardy propagated that input) and the inputs Shardy rejected (not
compared). --save writes each differing or failing program to DIR (and its
mismatches beside it) for minimizing into a regression case.
Needs the shared conformance scripts (SDYLOG_SHARED, else a `shared` folder beside the repository or its parents).
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/, for `generators`

from generators import shardy_differential as diff                       # noqa: E402
from generators.stablehlo_programs import ProgramConfig, random_program  # noqa: E402


def run_size(ops: int, args) -> dict:
    flags = args.flags.split()
    reshards = None if args.reshards is None else args.reshards == "1"
    stats = Counter()
    kinds = Counter()
    start = time.time()
    for seed in range(args.seed, args.seed + args.programs):
        program = random_program(seed, ProgramConfig(ops=ops))
        stats["ops"] += program.op_count
        try:
            result = diff.compare(program.text, flags, reshards)
        except diff.OracleError:
            stats["rejected by Shardy"] += 1
            continue
        except Exception as e:   # sdylog failed on an input Shardy propagates
            stats["sdylog failures"] += 1
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            kinds[msg[:120]] += 1
            save(args, ops, seed, program.text, traceback.format_exc())
            continue
        stats["programs"] += 1
        stats["values"] += result.values
        stats["agreeing values"] += result.agree
        if result.full:
            stats["full agreement"] += 1
        else:
            save(args, ops, seed, program.text, "\n".join(result.mismatches))
        if result.reshards is not None:
            stats["reshards"] += result.reshards[1]
            stats["agreeing reshards"] += result.reshards[0]
    stats["seconds"] = round(time.time() - start)
    return {"stats": stats, "failures": kinds}


def save(args, ops: int, seed: int, text: str, why: str) -> None:
    if not args.save:
        return
    d = Path(args.save)
    d.mkdir(parents=True, exist_ok=True)
    (d / f"ops{ops}_seed{seed}.mlir").write_text(text)
    (d / f"ops{ops}_seed{seed}.txt").write_text(why + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=50)
    ap.add_argument("--ops", default="20,100,300")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flags", default=diff.PIPELINE)
    ap.add_argument("--reshards", choices=("0", "1"), default=None,
                    help="compare reshards too (default: when sdylog has the reshard step)")
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    reason = diff.missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    reshards = diff.compare_reshards_default() if args.reshards is None else args.reshards == "1"
    print(f"flags {args.flags}; reshards compared: {'yes' if reshards else 'no'}")
    for ops in (int(n) for n in args.ops.split(",")):
        out = run_size(ops, args)
        s = out["stats"]
        n = s["programs"]
        line = (f"ops={ops}: {n} programs (mean {s['ops'] / max(1, args.programs):.0f} ops), "
                f"full agreement {s['full agreement']}/{n} ({100.0 * s['full agreement'] / max(1, n):.1f}%), "
                f"values {s['agreeing values']}/{s['values']} ({100.0 * s['agreeing values'] / max(1, s['values']):.2f}%), "
                f"sdylog failures {s['sdylog failures']}, rejected by Shardy {s['rejected by Shardy']}")
        if reshards:
            line += f", reshards {s['agreeing reshards']}/{s['reshards']}"
        print(line + f" [{s['seconds']} s]", flush=True)
        for msg, c in out["failures"].most_common():
            print(f"    failure x{c}: {msg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
