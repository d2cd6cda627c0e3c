"""Building MPMD test inputs and running their partitions (test helpers)."""
from __future__ import annotations

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
# Evaluates each module given (one per line in a list file) with the StableHLO
# reference interpreter; writes each one's outputs, or its error text.
_RUNNER = r"""
import sys, traceback, numpy as np
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _stablehlo
ctx = jmlir.make_ir_context()
ctx.allow_unregistered_dialects = True
_stablehlo.register_interpreter_dialect(ctx)
for src in open(sys.argv[1]).read().split():
    try:
        with ctx, ir.Location.unknown():
            m = ir.Module.parse(open(src).read())
            outs = [np.array(r) for r in _stablehlo.eval_module(m, [])]
        np.savez(src + ".npz", *outs)
    except Exception:
        open(src + ".err", "w").write(traceback.format_exc()[-2000:])
"""


def dense(x: np.ndarray) -> str:
    """An exact MLIR dense literal of a numpy array (raw little-endian bytes)."""
    x = np.ascontiguousarray(x)
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    return f'dense<"0x{x.tobytes().hex().upper()}">'


def oracle_module(part, inputs: list) -> tuple[str, dict]:
    """The per-device functions with an @main running them under
    interpreter.run_parallel (one process per device) on `inputs` as
    constants; and how many results each device's function has."""
    from jaxlib.mlir import ir
    plan = part.plan
    types = {}
    with part.module.context:
        for op in part.module.body.operations:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            types[name] = ([str(t) for t in ftype.inputs], [str(t) for t in ftype.results])
    consts, operands, results, counts = [], [], [], {}
    for d in plan.devices:
        name = f"{plan.entry}.dev{d}"
        args = [i for i, devs in enumerate(plan.arg_fed) if d in devs]
        for i, t in zip(args, types[name][0]):
            lit = dense(inputs[i])
            if "xi1>" in t or t == "tensor<i1>":   # (booleans: a byte each, converted)
                as_u8 = t.replace("i1>", "ui8>")
                consts.append(f"    %u{d}_{i} = stablehlo.constant {lit} : {as_u8}")
                consts.append(f"    %in{d}_{i} = stablehlo.convert %u{d}_{i} : ({as_u8}) -> {t}")
            else:
                consts.append(f"    %in{d}_{i} = stablehlo.constant {lit} : {t}")
            operands.append((f"%in{d}_{i}", t))
        results += types[name][1]
        counts[d] = len(types[name][1])
    programs = ", ".join(f"[@{plan.entry}.dev{d}]" for d in plan.devices)
    names = ", ".join(n for n, _ in operands)
    arg_types = ", ".join(t for _, t in operands)
    rtypes = ", ".join(results)
    n = len(results)
    res = f"%r:{n} = " if n > 1 else ("%r = " if n else "")
    rets = ", ".join(f"%r#{k}" for k in range(n)) if n > 1 else ("%r" if n else "")
    driver = "\n".join([
        f"  func.func @main() -> ({rtypes}) {{", *consts,
        f'    {res}"interpreter.run_parallel"({names}) {{programs = [{programs}]}} : ({arg_types}) -> ({rtypes})',
        f"    return {rets}{' : ' + rtypes if n else ''}", "  }"])
    text = part.text().rstrip().rstrip("}") + driver + "\n}\n"
    return text, counts


def run_reference(cases: list, timeout: float = 120) -> list:
    """[(part, inputs)] -> for each, the entry results under the StableHLO
    reference interpreter (a subprocess for all, with a timeout), or the
    error text when it fails (a deadlock aborts the process: "crashed")."""
    texts = [oracle_module(part, inputs) for part, inputs in cases]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, (text, _) in enumerate(texts):
            path = os.path.join(tmp, f"m{k}.mlir")
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        listing = os.path.join(tmp, "list")
        with open(listing, "w") as f:
            f.write("\n".join(paths))
        try:
            subprocess.run([sys.executable, "-c", _RUNNER, listing], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        out = []
        for (part, _), (_, counts), path in zip(cases, texts, paths):
            if os.path.exists(path + ".npz"):
                got = np.load(path + ".npz")
                out.append(_by_result_map(part.plan, counts, [got[f"arr_{k}"] for k in range(len(got.files))]))
            elif os.path.exists(path + ".err"):
                out.append(open(path + ".err").read())
            else:
                out.append("crashed")
    return out


def _by_result_map(plan, counts: dict, flat: list) -> list:
    by_device, k = {}, 0
    for d in plan.devices:
        by_device[d] = flat[k:k + counts[d]]
        k += counts[d]
    pos = {d: 0 for d in plan.devices}
    out = []
    for d in plan.result_loc:
        out.append(by_device[d][pos[d]])
        pos[d] += 1
    return out
