"""Building MPMD test inputs and running their partitions (test helpers)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from sdylog.mpmd.options import MpmdOptions
from sdylog.mpmd.partition import partition_text
from sdylog.simulate.mpmd import simulate_mpmd_text

T = "tensor<1024xf32>"


def on(d: int) -> str:
    """The attribute dictionary entry placing an op on device d."""
    return f"sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_{d}, []>]>"


def arg_on(d: int) -> str:
    return f"sdy.sharding = #sdy.sharding<@maximal_mesh_{d}, []>"


def module(body: str, devices: int = 2, name: str = "m") -> str:
    """A module with `devices` devices and a maximal mesh for each; `body` holds the functions."""
    meshes = "\n".join(f"  sdy.mesh @maximal_mesh_{d} = <[], device_ids=[{d}]>" for d in range(devices))
    return f"module @{name} attributes {{mhlo.num_partitions = {devices} : i32}} {{\n{meshes}\n{body}\n}}\n"


def partition(text: str, **options):
    return partition_text(text, "t.mlir", MpmdOptions(**options))


def simulate(text: str, mode: str = "buffered", seed: int = 0, **options):
    return simulate_mpmd_text(text, "t.mlir", MpmdOptions(**options), seed=seed, mode=mode)


def functions(text: str) -> dict:
    """Device -> the text of its function in a printed per-device module."""
    out, current = {}, None
    for line in text.splitlines():
        if "func.func" in line and ".dev" in line:
            current = int(line.split(".dev")[1].split("(")[0])
            out[current] = []
        if current is not None:
            out[current].append(line)
    return {d: "\n".join(lines) for d, lines in out.items()}


# ---------------------------------------------------------------- the reference interpreter
_RUNNER = r"""
import sys, numpy as np
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _stablehlo
ctx = jmlir.make_ir_context()
ctx.allow_unregistered_dialects = True
_stablehlo.register_interpreter_dialect(ctx)
with ctx, ir.Location.unknown():
    m = ir.Module.parse(open(sys.argv[1]).read())
    outs = [np.array(r) for r in _stablehlo.eval_module(m, [])]
np.savez(sys.argv[2], *outs)
"""


def dense(x: np.ndarray) -> str:
    """An exact MLIR dense literal of a numpy array (raw little-endian bytes)."""
    x = np.ascontiguousarray(x)
    if x.dtype == np.bool_:
        body = ", ".join("true" if b else "false" for b in x.reshape(-1))
        return f"dense<[{body}]>" if x.ndim else f"dense<{'true' if x.item() else 'false'}>"
    return f'dense<"0x{x.tobytes().hex().upper()}">'


def run_reference(part, inputs: list, timeout: float = 60) -> list | str:
    """The per-device functions under the StableHLO reference interpreter
    (interpreter.run_parallel, one process per device) in a subprocess:
    the entry results in order, or the error text when it fails (a deadlock
    aborts it)."""
    plan = part.plan
    text = part.text()
    fn_types = {}
    from jaxlib.mlir import ir
    with part.module.context:
        for op in part.module.body.operations:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            fn_types[name] = ([str(t) for t in ftype.inputs], [str(t) for t in ftype.results])
    consts, operands, results = [], [], []
    for d in plan.devices:
        name = f"{plan.entry}.dev{d}"
        args = [i for i, devs in enumerate(plan.arg_fed) if d in devs]
        for i, t in zip(args, fn_types[name][0]):
            consts.append(f"    %in{d}_{i} = stablehlo.constant {dense(inputs[i])} : {t}")
            operands.append((f"%in{d}_{i}", t))
        results += fn_types[name][1]
    programs = ", ".join(f"[@{plan.entry}.dev{d}]" for d in plan.devices)
    names = ", ".join(n for n, _ in operands)
    types = ", ".join(t for _, t in operands)
    rtypes = ", ".join(results)
    n = len(results)
    res = f"%r:{n}" if n > 1 else "%r"
    rets = ", ".join(f"%r#{k}" for k in range(n)) if n > 1 else ("%r" if n else "")
    driver = "\n".join([
        f"  func.func @main() -> ({rtypes}) {{", *consts,
        f'    {res + " = " if n else ""}"interpreter.run_parallel"({names}) {{programs = [{programs}]}} : '
        f"({types}) -> ({rtypes})",
        f"    return {rets}{' : ' + rtypes if n else ''}", "  }"])
    text = text.rstrip().rstrip("}") + driver + "\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "m.mlir"), os.path.join(tmp, "out.npz")
        with open(src, "w") as f:
            f.write(text)
        try:
            p = subprocess.run([sys.executable, "-c", _RUNNER, src, out], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout"
        if p.returncode != 0:
            return p.stderr[-2000:] or f"exit {p.returncode}"
        got = np.load(out)
        flat = [got[f"arr_{k}"] for k in range(len(got.files))]
    # device results in device order -> the entry's results by the result map
    by_device, k = {}, 0
    for d in plan.devices:
        m = len(fn_types[f"{plan.entry}.dev{d}"][1])
        by_device[d] = flat[k:k + m]
        k += m
    pos = {d: 0 for d in plan.devices}
    out = []
    for d in plan.result_loc:
        out.append(by_device[d][pos[d]])
        pos[d] += 1
    return out


def manifest_json(part) -> dict:
    return json.loads(json.dumps(part.manifest()))
