#!/usr/bin/env python3
"""The MPMD figures of issue 20, in one run:

    mpmd_report.py [--models transformer_L8] [--stages 4]

1. mpmd.md's section 5 scenarios (inputs from tests/mpmd/test_scenarios.py):
   each simulated in buffered and rendezvous mode against the unpartitioned
   program: pass/fail, channels, bytes moved.
2. bf16 transfers: bytes of every f32 channel with and without
   --bf16-transfers (halved), on the scenarios and models below.
3. Dedup: cross-device edges (operands read on a device that does not hold
   them) against transfers (one per value and destination), on the two-stage
   pipelined MLP in 1F1B order and on each model placed in stages by layer.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
from corpus import CORPUS  # noqa: E402
from mpmd_stages import staged_text  # noqa: E402

STAGES = "stage0_fwd@0,stage0_bwd@0,stage1_fwd@1,stage1_bwd@1"


def scenarios():
    """(name, text, options, expected failure) of each scenario the tests cover."""
    from tests.mpmd import test_scenarios as s
    pipe = os.path.join(HERE, "..", "tests", "mpmd", "data")
    p1, pg = (open(os.path.join(pipe, f"pipeline_{k}.mlir")).read() for k in ("1f1b", "gpipe"))
    stages = dict(assign=s.STAGES, devices=2)
    return [
        ("S01 single device", s.S01, {}), ("S02 cross-device data", s.S02, {}),
        ("S03 multi-use, one transfer", s.S03, {}), ("S04 fan-out star", s.S04, {}),
        ("S04 fan-out chain", s.S04, {"fanout": "chain"}), ("S05 control dependency", s.S05, {}),
        ("S06 data+control merged", s.S06, {}), ("S06 data+control apart", s.S06, {"merge_control": False}),
        ("S07 host memory arg", s.S07, {}), ("S08 move to host", s.s08(False), {}),
        ("S08 staged host arg", s.s08(True), {}), ("S09 bf16 nearest", s.S09, {"bf16_transfers": "nearest"}),
        ("S09 bf16 truncate", s.S09, {"bf16_transfers": "truncate"}), ("S10 results, args fed twice", s.S10, {}),
        ("S11 loop spanning devices", s.S11, {}), ("S12 loop invariant + body value", s.S12, {}),
        ("S13 nested loop", s.S13, {}), ("S14 case spanning devices", s.S14, {}),
        ("S15 placed where used", s.S15, {}), ("S16 no use: operand device", s.S16, {}),
        ("S17 sums reduced locally", s.S17, {"reduce_locally": True}),
        ("S19 pipeline 1F1B", p1, stages), ("S19 pipeline GPipe", pg, stages),
        ("S18 recv lazy", s.s18(), {"recv_policy": "lazy"}),
        ("S21 constraint request", s.S21, {}), ("S22 small transfers merged", s.S22, {"merge_small": True}), ("S23 functions", s.S23, {"assign": (("f", 1), ("g", 1))}),
        ("S24 host transfers kept", s.S24, {}),
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="transformer_L8")
    p.add_argument("--stages", type=int, default=4)
    a = p.parse_args()

    from sdylog.mpmd.options import MpmdOptions, parse_assign
    from sdylog.mpmd.partition import partition_text
    from sdylog.simulate.mpmd import simulate_emitted_text, simulate_mpmd_text

    failed = 0
    print("## mpmd.md section 5 scenarios (both channel modes)\n")
    print("| scenario | buffered | rendezvous | channels | bytes moved |")
    print("| --- | --- | --- | --- | --- |")
    for name, text, opts in scenarios():
        modes = ("buffered",) if opts.get("recv_policy", "eager") != "eager" else ("buffered", "rendezvous")
        results = [simulate_mpmd_text(text, "s.mlir", MpmdOptions(**opts), mode=m) for m in modes]
        ok = ["pass" if r.match else "FAIL" for r in results] + ["(refused: buffered only)"] * (2 - len(results))
        failed += ok.count("FAIL")
        print(f"| {name} | {ok[0]} | {ok[1]} | {len(results[0].channels)} | {results[0].total_bytes} |")
    from tests.mpmd import test_scenarios as s
    for name, text, want in (("S20 cycle", s.S20_CYCLE, ("deadlock", "deadlock")),
                             ("S20 crossed order", s.S20_CROSSED, ("pass", "deadlock"))):
        got = tuple("pass" if r.match else "deadlock" if r.deadlock else "FAIL"
                    for r in (simulate_emitted_text(text, "s20.mlir", mode=m) for m in ("buffered", "rendezvous")))
        failed += got != want
        print(f"| {name} (expected: {'/'.join(want)}) | {got[0]} | {got[1]} | - | - |")
    print("| S25 impossible inputs | located errors (tests/mpmd/test_scenarios.py, test_commands.py) | | | |")

    print("\n## bf16 transfers: bytes of f32 channels, off -> nearest\n")
    pipe = open(os.path.join(HERE, "..", "tests", "mpmd", "data", "pipeline_1f1b.mlir")).read()
    cases = [("S09", s.S09, {}), ("pipeline MLP 1F1B", pipe, dict(assign=parse_assign([STAGES]), devices=2))]
    models = [(m, staged_text(str(CORPUS / f"{m}.mlir"), a.stages)) for m in a.models.split(",")]
    cases += [(f"{m} in {a.stages} stages", t, {}) for m, t in models]
    for name, text, opts in cases:
        plain = partition_text(text, "x.mlir", MpmdOptions(**opts)).plan.channels
        cast = partition_text(text, "x.mlir", MpmdOptions(bf16_transfers="nearest", **opts)).plan.channels
        f32 = [(c.bytes, d.bytes) for c, d in zip(plain, cast) if c.elem_type == "f32"]
        halved = all(b == 2 * h for b, h in f32)
        failed += not halved
        print(f"- {name}: {len(f32)} f32 channels, {sum(b for b, _ in f32)} B -> {sum(h for _, h in f32)} B "
              f"({'every one halved' if halved else 'NOT halved'})")

    print("\n## dedup: cross-device edges vs transfers\n")
    for name, text, opts in cases[1:]:
        stats = partition_text(text, "x.mlir", MpmdOptions(**opts)).plan.stats
        print(f"- {name}: {stats['cross_edges']} cross-device edges, {stats['transfers']} transfers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
