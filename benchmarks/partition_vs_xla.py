#!/usr/bin/env python3
"""sdylog's partitioned programs beside XLA's own partitioner, per corpus model.

    python benchmarks/partition_vs_xla.py [--runs N] [--json OUT] [MODEL.mlir ...]
    (default: every model of the corpus)

For each model, with the same shardings (the module's own):

bytes per device, ring model: sdylog's partitioned program (`sdylog simulate
MODEL --json`: its collectives costed by rules/collectives.dl) beside the
program XLA's SPMD partitioner makes of the module, compiled by jax for
`mhlo.num_partitions` host CPU devices (XLA_FLAGS=
--xla_force_host_platform_device_count=N): the collectives of the compiled
HLO costed by the same rules (each collective's operand block and group
size as the rules' input, so the same formulas apply). Both count every
collective op once, whether or not it sits in a loop.

time: sdylog simulate (whole: reference run, pipeline, per-device runs) and
its steady step (the per-device program on all simulated devices, best of
--runs), beside XLA's compile + first step and its steady step (best of
--runs), each as wall time and as the process's CPU time (process_time:
on a machine other jobs share, wall time is mostly theirs); and sdylog's partitioner pipeline (propagation to per-device
program) beside Shardy's -sdy-propagation-pipeline then -sdy-export-pipeline
with explicit collectives, in-process in fresh processes (warm: best of
--runs).

The XLA and Shardy sides run in child processes (the device count must be
set before jax starts); XLA is used here and in tests only, never in
sdylog/.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from corpus import CORPUS  # noqa: E402

from sdylog.ir.diagnostics import SdylogError
from sdylog.partition.device_collectives import BlockCollective, ring_bytes

# ---------------------------------------------------------------- XLA's side
_XLA_CHILD = r"""
import json, sys, time
import numpy as np
path, n, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
import jax
from jax._src import compiler, xla_bridge
from jax._src.interpreters import mlir as jmlir
from jax._src.lib import xla_client as xc
from jax._src.sharding_impls import GSPMDSharding
from jaxlib.mlir import ir
text = open(path).read()
backend = xla_bridge.get_backend("cpu")
devices = jax.devices("cpu")[:n]
t0 = time.perf_counter()
with jmlir.make_ir_context():
    module = ir.Module.parse(text)
    main = next(op for op in module.body.operations if "sym_name" in op.attributes
                and ir.StringAttr(op.attributes["sym_name"]).value == "main")
    inputs = [ir.RankedTensorType(t) for t in ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs]
    shapes = [(tuple(t.shape), str(t.element_type)) for t in inputs]
    opts = compiler.get_compile_options(num_replicas=1, num_partitions=n,
                                        device_assignment=np.arange(n).reshape(1, n), backend=backend)
    opts.executable_build_options.use_spmd_partitioning = True
    exe = compiler.backend_compile_and_load(backend, module, xc.DeviceList(tuple(devices)), opts, [])
compile_s = time.perf_counter() - t0
dtypes = {"f32": np.float32, "f16": np.float16, "bf16": jax.numpy.bfloat16, "f64": np.float64,
          "i32": np.int32, "i64": np.int64, "ui32": np.uint32, "i1": np.bool_}
rng = np.random.default_rng(0)
def value(shape, dt):
    if dt.startswith(("f", "bf")):
        return (rng.standard_normal(shape) / np.sqrt(max(shape or (1,)))).astype(dtypes[dt])
    return np.zeros(shape, dtypes[dt])
arrays = [jax.device_put(value(shape, dt), GSPMDSharding(tuple(devices), sh))
          for (shape, dt), sh in zip(shapes, exe.get_parameter_shardings())]
def step():
    out = exe.execute_sharded(arrays)
    for per_device in out.disassemble_into_single_device_arrays():
        for a in per_device:
            a.block_until_ready()
t1 = time.perf_counter()
step()
first_s = time.perf_counter() - t1
steady, steady_cpu = [], []
for _ in range(runs):
    t, c = time.perf_counter(), time.process_time()
    step()
    steady.append(time.perf_counter() - t)
    steady_cpu.append(time.process_time() - c)
print(json.dumps({"compile_s": compile_s, "first_step_s": first_s, "steady_s": min(steady),
                  "steady_cpu_s": min(steady_cpu),
                  "hlo": exe.hlo_modules()[0].to_string()}))
"""

_KINDS = {"all-reduce": "all_reduce", "all-gather": "all_gather", "reduce-scatter": "reduce_scatter",
          "all-to-all": "all_to_all", "collective-permute": "collective_permute"}
_ELEMENT_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
                  "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%(?P<name>[\w.\-]+)\s*=\s*(?P<shape>\(.*?\)|[a-z0-9]+\[[^\]]*\](?:\{[^}]*\})?)\s+"
                          r"(?P<op>[\w\-]+)\((?P<args>[^)]*)\)(?P<rest>.*)$")
_ARRAY = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")


def shape_bytes(shape: str) -> int:
    """Bytes of an HLO shape (a tuple: the sum of its elements)."""
    total = 0
    for dtype, dims in _ARRAY.findall(shape):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * _ELEMENT_BYTES.get(dtype, 4)
    return total


def group_size(rest: str, num_devices: int) -> int:
    """Devices in each replica group of a collective (every device when it
    names none), from any of HLO's three spellings."""
    m = re.search(r"replica_groups=\{(\{[^}]*\})", rest)
    if m:
        return len([x for x in m.group(1).strip("{}").split(",") if x.strip()])
    m = re.search(r"replica_groups=\[([0-9,]+)\]<=", rest)
    if m:
        return int(m.group(1).split(",")[-1])
    m = re.search(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}", rest)
    if m:
        sizes = dict((k.strip("' "), int(v)) for k, v in (a.split("=") for a in m.group(1).split(",")))
        g = 1
        for a in m.group(2).split(","):
            g *= sizes[a.strip("' ")]
        return g
    return num_devices


def hlo_collectives(hlo: str, num_devices: int) -> list[BlockCollective]:
    """Every collective of an HLO module (async ones by their -start op):
    kind, group size, and S, the bytes of its operands on one device."""
    defs, found = {}, []
    for line in hlo.splitlines():
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        defs[m["name"]] = m["shape"]
        op = m["op"].removesuffix("-start")
        if op not in _KINDS:
            continue
        operands = re.findall(r"%([\w.\-]+)", m["args"])
        block = sum(shape_bytes(defs.get(o, "")) for o in operands)
        g = group_size(m["rest"], num_devices)
        if op == "collective-permute" and re.search(r"source_target_pairs=\{\}", m["rest"]):
            continue
        found.append(BlockCollective(_KINDS[op], g, block))
    return found


def xla_side(model: Path, num_devices: int, runs: int) -> dict:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={num_devices}")
    p = subprocess.run([sys.executable, "-c", _XLA_CHILD, str(model), str(num_devices), str(runs)],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    out = json.loads(p.stdout.strip().splitlines()[-1])
    collectives = hlo_collectives(out.pop("hlo"), num_devices)
    out["collectives"] = [{"kind": c.kind, "group_size": c.group_size, "block_bytes": c.block_bytes,
                           "bytes_per_device": b} for c, b in zip(collectives, ring_bytes(collectives))]
    out["bytes_per_device"] = sum(c["bytes_per_device"] for c in out["collectives"])
    return out


# ---------------------------------------------------------------- Shardy's export pipeline (speed anchor)
_SHARDY_CHILD = r"""
import json, sys, time
path, runs = sys.argv[1], int(sys.argv[2])
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir, passmanager
text = open(path).read()
ctx = jmlir.make_ir_context()
pipeline = ("builtin.module(sdy-propagation-pipeline,"
            "sdy-export-pipeline{enable-insert-explicit-collectives=true})")
def once():
    with ctx:
        m = ir.Module.parse(text)
        passmanager.PassManager.parse(pipeline).run(m.operation)
        return str(m)
"""

_SDYLOG_CHILD = r"""
import json, sys, time
path, runs = sys.argv[1], int(sys.argv[2])
from sdylog.ir import parse_module, print_module
from sdylog.partition.pipeline import partition_module
from sdylog.passes import PassContext
text = open(path).read()
def once():
    module = parse_module(text, path)
    with module.context:
        partition_module(module, PassContext(filename=path), explicit=False)
        return print_module(module)
"""


# Each timing child ends here: `once()` cold, then the best of `runs` warm calls.
_TIMED = r"""
t = time.perf_counter(); once(); cold = time.perf_counter() - t
warm = []
for _ in range(runs):
    t = time.perf_counter(); once(); warm.append(time.perf_counter() - t)
print(json.dumps({"cold": cold, "warm": min(warm)}))
"""


def child(code: str, model: Path, runs: int) -> dict:
    p = subprocess.run([sys.executable, "-c", code + _TIMED, str(model), str(runs)], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- sdylog's side
def sdylog_side(model: Path, runs: int) -> dict:
    """simulate in this process: the whole run once, then the per-device
    program's steady step."""
    from sdylog.simulate import simulate as sim

    steps = []
    real_run = sim.run_on_devices

    def timed_run(program, device_runs, stats=None):
        t = time.perf_counter()
        out = real_run(program, device_runs, stats=stats)
        steps.append((time.perf_counter() - t, program, device_runs))
        return out

    sim.run_on_devices = timed_run
    try:
        t = time.perf_counter()
        report = sim.simulate_main(str(model))
        whole = time.perf_counter() - t
    except SdylogError as e:
        return {"error": str(e).splitlines()[0]}
    finally:
        sim.run_on_devices = real_run
    _, program, device_runs = steps[0]
    steady, steady_cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        real_run(program, device_runs)
        steady.append(time.perf_counter() - t)
        steady_cpu.append(time.process_time() - c)
    out = report.json()
    return {"match": out["match"], "max_rel_error": out["max_rel_error"], "bytes_per_device": out["bytes_per_device"],
            "collectives": out["collectives"], "simulate_s": whole, "first_step_s": steps[0][0],
            "steady_s": min(steady), "steady_cpu_s": min(steady_cpu), "skipped_steps": out["skipped_steps"]}


def num_partitions(model: Path) -> int:
    m = re.search(r"mhlo\.num_partitions = (\d+)", model.read_text())
    return int(m.group(1)) if m else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--no-speed", action="store_true", help="skip the partitioner-vs-Shardy timing")
    args = ap.parse_args()
    models = args.models or sorted(CORPUS.glob("*.mlir"), key=lambda p: (len(p.read_text()), p.name))
    rows = []
    for model in models:
        n = num_partitions(model)
        ours = sdylog_side(model, args.runs)
        xla = xla_side(model, n, args.runs)
        row = {"model": model.stem, "devices": n, "sdylog": ours, "xla": xla}
        if not args.no_speed:
            row["partitioner"] = child(_SDYLOG_CHILD, model, args.runs)
            row["shardy_export"] = child(_SHARDY_CHILD, model, args.runs)
        rows.append(row)
        print(_line(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    _summary(rows)


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if b else ("1.00x" if not a else "inf")


def _line(row: dict) -> str:
    s, x = row["sdylog"], row["xla"]
    if "error" in s:
        return f"{row['model']} ({row['devices']} devices): sdylog failed: {s['error']}"
    parts = [f"{row['model']} ({row['devices']} devices): match {s['match']}"]
    if "error" in x:
        parts.append(f"XLA failed: {x['error']}")
    else:
        parts.append(f"bytes/device sdylog {s['bytes_per_device']} ({len(s['collectives'])} collectives) "
                     f"xla {x['bytes_per_device']} ({len(x['collectives'])}) ratio "
                     f"{_ratio(s['bytes_per_device'], x['bytes_per_device'])}")
        parts.append(f"simulate {s['simulate_s']:.2f}s, step {s['steady_s'] * 1e3:.1f}ms "
                     f"(cpu {s['steady_cpu_s'] * 1e3:.1f}ms) | xla compile+first "
                     f"{(x['compile_s'] + x['first_step_s']):.2f}s, step {x['steady_s'] * 1e3:.1f}ms "
                     f"(cpu {x['steady_cpu_s'] * 1e3:.1f}ms) | step ratio {s['steady_s'] / x['steady_s']:.1f}x "
                     f"(cpu {s['steady_cpu_s'] / x['steady_cpu_s']:.1f}x)")
    if "partitioner" in row:
        a, b = row["partitioner"], row["shardy_export"]
        if "error" in a or "error" in b:
            parts.append(f"partitioner timing failed: {a.get('error') or b.get('error')}")
        else:
            parts.append(f"partitioner warm {a['warm']:.3f}s vs shardy export {b['warm']:.3f}s "
                         f"ratio {a['warm'] / b['warm']:.2f}")
    return " | ".join(parts)


def _summary(rows: list[dict]) -> None:
    ran = [r for r in rows if "error" not in r["sdylog"]]
    over = [r for r in ran if "error" not in r["xla"]
            and r["sdylog"]["bytes_per_device"] > r["xla"]["bytes_per_device"]]
    print(f"models matching: {sum(r['sdylog']['match'] for r in ran)}/{len(rows)}")
    print("models above XLA's bytes per device: " + (", ".join(
        f"{r['model']} {_ratio(r['sdylog']['bytes_per_device'], r['xla']['bytes_per_device'])}" for r in over)
        or "none"))


if __name__ == "__main__":
    main()
