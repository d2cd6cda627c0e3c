#!/usr/bin/env python3
"""Executor speed: sdylog's simulator vs XLA's CPU backend vs the StableHLO
reference interpreter, on one module (shardings ignored) and one set of inputs.

    executor_bench.py [--module FILE] [--seed S] [--repeat N]
                      [--reference run|skip] [--reference-cache FILE] [--reference-timeout S]

1. sdylog: the module is compiled once into closures (`Program`), then run
   `--repeat` times; the median run is reported (compile time separately).
2. XLA: the same module, with its shardings and meshes dropped and
   `mhlo.num_partitions = 1`, compiled by jax's CPU client (one device) and
   executed `--repeat` times on device-resident inputs (median, results read back).
3. Reference: jaxlib's StableHLO reference interpreter (`eval_module`) on the
   same module and inputs, once. It is slow (about 2 hours for
   transformer_L2 on an idle machine); `--reference-cache FILE` stores its
   outputs and time and reuses them when FILE holds a run on the same module
   text and seed; `--reference-timeout S` stops it after S seconds and reports
   the time as a lower bound.

All results are compared: sdylog vs XLA and sdylog vs the reference, within
float tolerance (|a-b| <= 1e-3 * (1 + max|b|) per result). Exit 1 when they differ.
Oracles (XLA, the reference interpreter) appear only here, never in sdylog.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

import numpy as np

from corpus import CORPUS  # noqa: E402

# the reference interpreter as the simulator's tests run it
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "simulate"))
from simulate_oracle import reference_timed  # noqa: E402

DEFAULT_MODULE = str(CORPUS / "transformer_L2.mlir")


def make_inputs(text: str, seed: int) -> list[np.ndarray]:
    from jaxlib.mlir import ir

    from sdylog.ir import parse_module
    from sdylog.simulate.simulate import random_inputs
    module = parse_module(text)
    with module.context:
        main = next(op for op in module.body.operations if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == "main")
        return random_inputs(main.operation, seed)


def run_sdylog(text: str, inputs, repeat: int):
    from sdylog.ir import parse_module
    from sdylog.simulate.program import Program
    module = parse_module(text)
    with module.context:
        t0 = time.perf_counter()
        program = Program(module)
        fn = program.function("main")
        compile_s = time.perf_counter() - t0
        times, out = [], None
        for _ in range(repeat + 1):  # the first run warms caches
            t0 = time.perf_counter()
            out = [np.asarray(r) for r in fn(list(inputs))]
            times.append(time.perf_counter() - t0)
    return out, compile_s, times[1:]


def run_xla(text: str, inputs, repeat: int):
    import jax
    from jax._src import compiler
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir

    from sdylog.passes.drop_sharding_and_mesh import run as drop_sharding_and_mesh
    ctx = jmlir.make_ir_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        drop_sharding_and_mesh(module, {}, None)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, 1)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        device = jax.devices("cpu")[0]
        t0 = time.perf_counter()
        exe = device.client.compile_and_load(module, executable_devices=xc.DeviceList((device,)),
                                             compile_options=compiler.get_compile_options(1, 1))
        compile_s = time.perf_counter() - t0
    args = [jax.device_put(x, device) for x in inputs]
    times, out = [], None
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        res = exe.execute_sharded(args).disassemble_into_single_device_arrays()
        out = [np.asarray(r[0]) for r in res]
        times.append(time.perf_counter() - t0)
    return out, compile_s, times[1:]


def _reference_child(module_path: str, seed: int, out_path: str) -> None:
    text = open(module_path).read()
    outs, seconds = reference_timed(text, make_inputs(text, seed))
    np.savez(out_path, n=len(outs), seconds=seconds, **{f"out{i}": o for i, o in enumerate(outs)})


def reference_with_cache(module_path: str, text: str, seed: int, cache: str | None, timeout: float | None):
    """(outputs, seconds, from_cache); outputs None when the run passed `timeout` seconds
    (then seconds is the time it ran: a lower bound)."""
    import multiprocessing as mp
    import tempfile
    key = hashlib.sha256(text.encode() + str(seed).encode()).hexdigest()
    if cache and os.path.exists(cache):
        data = np.load(cache, allow_pickle=False)
        if str(data["key"]) == key:
            n = int(data["n"])
            return [data[f"out{i}"] for i in range(n)], float(data["seconds"]), True
    # A child process, so that a run past the timeout can be stopped (eval_module cannot).
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "ref.npz")
        child = mp.get_context("spawn").Process(target=_reference_child, args=(module_path, seed, out_path))
        t0 = time.perf_counter()
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.terminate()
            child.join()
            return None, time.perf_counter() - t0, False
        data = np.load(out_path, allow_pickle=False)
        outs = [data[f"out{i}"] for i in range(int(data["n"]))]
        seconds = float(data["seconds"])
    if cache:
        np.savez(cache, key=key, n=len(outs), seconds=seconds, **{f"out{i}": o for i, o in enumerate(outs)})
    return outs, seconds, False


def compare(a_list, b_list) -> tuple[bool, float]:
    """All results close; the worst |a-b| / (1 + max|b|)."""
    worst, ok = 0.0, len(a_list) == len(b_list)
    for a, b in zip(a_list, b_list):
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            return False, float("inf")
        scale = 1.0 + (float(np.max(np.abs(b))) if b.size else 0.0)
        err = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
        worst = max(worst, err)
        ok &= err <= 1e-3
    return ok, worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default=DEFAULT_MODULE)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reference", choices=["run", "skip"], default="run")
    ap.add_argument("--reference-cache", default=None)
    ap.add_argument("--reference-timeout", type=float, default=None,
                    help="Stop the reference run after this many seconds and report a lower bound.")
    args = ap.parse_args()

    text = open(args.module).read()
    inputs = make_inputs(text, args.seed)
    print(f"module: {args.module} ({len(inputs)} inputs, seed {args.seed})")

    mine, mine_compile, mine_times = run_sdylog(text, inputs, args.repeat)
    mine_s = statistics.median(mine_times)
    print(f"sdylog:    compile {mine_compile:.3f} s, run median {mine_s:.3f} s "
          f"(runs: {', '.join(f'{t:.3f}' for t in mine_times)})")

    xla, xla_compile, xla_times = run_xla(text, inputs, args.repeat)
    xla_s = statistics.median(xla_times)
    ok_xla, err_xla = compare(mine, xla)
    print(f"XLA CPU:   compile {xla_compile:.3f} s, run median {xla_s:.3f} s "
          f"(runs: {', '.join(f'{t:.3f}' for t in xla_times)})")
    print(f"sdylog / XLA time: {mine_s / xla_s:.2f}x median, {min(mine_times) / min(xla_times):.2f}x best "
          f"(goal <= 3x); results {'equal' if ok_xla else 'DIFFER'} (worst scaled error {err_xla:.2e})")

    ok = ok_xla
    if args.reference == "run":
        ref, ref_s, cached = reference_with_cache(args.module, text, args.seed, args.reference_cache,
                                                  args.reference_timeout)
        if ref is None:
            print(f"reference: stopped after {ref_s:.1f} s without finishing")
            print(f"reference / sdylog time: > {ref_s / mine_s:.0f}x (lower bound; goal >= 100x); "
                  "results not compared")
        else:
            ok_ref, err_ref = compare(mine, ref)
            ok &= ok_ref
            print(f"reference: run {ref_s:.1f} s{' (from cache ' + args.reference_cache + ')' if cached else ''}")
            print(f"reference / sdylog time: {ref_s / mine_s:.0f}x (goal >= 100x); results "
                  f"{'equal' if ok_ref else 'DIFFER'} (worst scaled error {err_ref:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
