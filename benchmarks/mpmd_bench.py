#!/usr/bin/env python3
"""MPMD partitioning, measured: a model placed in pipeline stages by layer
(benchmarks/mpmd_stages.py), partitioned (`sdylog mpmd`) and simulated
(`sdylog simulate`: a program per device, channels), against the
unpartitioned program run on one device the way `sdylog interpret` runs it.

    mpmd_bench.py [--model transformer_L8] [--stages 4] [--repeat 3] [--mode buffered|rendezvous]

Reports, in one run (CPU seconds, best of --repeat; the simulation's
threads are counted, and the machine may be shared: ratios, not seconds):
  anchor     the unpartitioned program: compiled into closures and run once
  mpmd       parse, inline, facts, the rules (rules/mpmd.dl, one evaluation),
             emission of the per-device functions, jaxlib verification
  simulate   the per-device programs compiled and run, joined by channels
and (mpmd + simulate) / anchor; then the channels, cross-device edges vs
transfers, bytes with and without --bf16-transfers, and whether the results
are bitwise equal to the unpartitioned ones.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import CORPUS  # noqa: E402
from mpmd_stages import staged_text  # noqa: E402


def cpu(fn, repeat: int):
    """(best CPU seconds, last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="transformer_L8")
    p.add_argument("--stages", type=int, default=4)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--mode", default="buffered", choices=["buffered", "rendezvous"])
    a = p.parse_args()

    from sdylog.ir import parse_module
    from sdylog.ir.walk import func_ops, symbol_name
    from sdylog.mpmd.options import MpmdOptions
    from sdylog.mpmd.partition import partition_text
    from sdylog.simulate.mesh import CollectiveStats, DeviceRun
    from sdylog.simulate.mpmd import compare_bitwise, run_devices
    from sdylog.simulate.program import DeviceRuntime, Program
    from sdylog.simulate.simulate import random_inputs

    path = CORPUS / f"{a.model}.mlir"
    original = path.read_text()
    text = staged_text(str(path), a.stages)

    def anchor():
        module = parse_module(original, str(path))
        with module.context:
            fn = next(f for f in func_ops(module) if symbol_name(f) == "main")
            inputs = random_inputs(fn, 0)
            return inputs, Program(module, str(path)).run("main", inputs, DeviceRuntime(stats=CollectiveStats()))

    def mpmd():
        return partition_text(text, "staged.mlir", MpmdOptions())

    t_anchor, (inputs, reference) = cpu(anchor, a.repeat)
    t_mpmd, part = cpu(mpmd, a.repeat)
    plan = part.plan
    runs = [DeviceRun(f"main.dev{d}", [inputs[i] for i, devs in enumerate(plan.arg_fed) if d in devs])
            for d in plan.devices]

    def simulate():
        return run_devices(part.module, "staged.mlir", runs, a.mode, part.manifest()["channels"])

    t_sim, (report, per_device) = cpu(simulate, a.repeat)
    pos = {d: 0 for d in plan.devices}
    same = True
    for want, d in zip(reference, plan.result_loc):
        same &= compare_bitwise(per_device[d][pos[d]], want)[0]
        pos[d] += 1
    bf16 = partition_text(text, "staged.mlir", MpmdOptions(bf16_transfers="nearest")).plan

    print(f"{a.model}, {a.stages} stages by layer, {len(plan.facts.ops)} ops, {a.mode} channels")
    print(f"  anchor (unpartitioned, compile + run): {t_anchor:8.3f} s cpu")
    print(f"  sdylog mpmd (plan + emit + verify):    {t_mpmd:8.3f} s cpu")
    print(f"  simulate (devices + channels):         {t_sim:8.3f} s cpu")
    print(f"  (mpmd + simulate) / anchor:            {(t_mpmd + t_sim) / t_anchor:8.2f}x")
    print(f"  results bitwise equal to the unpartitioned program: {same}")
    print(f"  cross-device edges {plan.stats['cross_edges']}, transfers {plan.stats['transfers']}, "
          f"channels {len(plan.channels)}")
    print(f"  bytes moved {report.total_bytes}; with --bf16-transfers nearest "
          f"{sum(c.bytes for c in bf16.channels)} per run")
    for c in plan.channels:
        print(f"    channel {c.id}: {c.src} -> {c.dst} {c.elem_type}{list(c.shape)} {c.bytes} B")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
