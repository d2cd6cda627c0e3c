"""`sdylog simulate`: does the sharded program compute what the unsharded one does?

1. Random global inputs for the entry function (from the seed).
2. The global program runs on one device: Shardy's collectives are identities
   in the global view, so this is the unpartitioned computation.
3. -sdy-convert-global-to-local gives the per-device program; every device
   of the mesh runs it on its shards of the inputs, collectives moving data
   between the devices' buffers.
4. Each device's results are compared with its shard of the global results.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.ir.walk import symbol_name
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs
from sdylog.partition.shards import shard_slices
from sdylog.simulate.dtypes import is_bool, is_complex, is_float, is_integer, is_unsigned, tensor_dtype
from sdylog.simulate.mesh import CollectiveStats, DeviceRun, run_on_devices
from sdylog.simulate.program import DeviceRuntime, Program


@dataclass
class OutputCheck:
    index: int
    shape: tuple
    ok: bool
    max_error: float
    detail: str = ""


@dataclass
class SimulationReport:
    devices: int
    stats: CollectiveStats
    outputs: list[OutputCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    def text(self) -> str:
        lines = [f"devices: {self.devices}", "", self.stats.table(), ""]
        for o in self.outputs:
            status = "ok" if o.ok else "MISMATCH"
            lines.append(f"result #{o.index} {list(o.shape)}: {status} (max error {o.max_error:.3g})"
                         + (f" {o.detail}" if o.detail else ""))
        lines.append("")
        lines.append("PASS: sharded and unsharded results agree" if self.ok else
                     "FAIL: sharded and unsharded results differ")
        return "\n".join(lines)


def random_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    if is_bool(dtype):
        return rng.random(shape) < 0.5
    if is_complex(dtype):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if is_float(dtype):
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    if is_integer(dtype):
        lo, hi = (0, 16) if is_unsigned(dtype) else (-8, 8)
        return rng.integers(lo, hi, size=shape).astype(np.int64).astype(dtype)
    raise SdylogError(f"cannot make random inputs of type {dtype}")


def random_inputs(func_op, seed: int, filename: str | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
    out = []
    for i, t in enumerate(ftype.inputs):
        if not isinstance(t, ir.RankedTensorType):
            raise SdylogError(f"cannot make a random input of type {t}")
        try:
            out.append(random_array(rng, tuple(t.shape), tensor_dtype(t)))
        except (MemoryError, ValueError) as e:     # (numpy: "array is too big", or no memory for it)
            raise error_at(func_op, f"cannot make the random input of argument {i} ({t}) to simulate: "
                           f"{' '.join(str(e).split()) or 'out of memory'}", filename) from None
    return out


def _entry(module, entry: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and symbol_name(op) == entry:
            return op.operation
    raise SdylogError(f"no function named @{entry}")


def _mesh_for(module, func_op) -> Mesh:
    meshes = meshes_of_module(module)
    shardings = [irs.func_arg_sharding(func_op, i) for i in range(len(func_op.regions[0].blocks[0].arguments))]
    shardings += [irs.func_result_sharding(func_op, i)
                  for i in range(len(ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value).results))]
    used = {irs.resolve_mesh(s, meshes) for s in shardings if s is not None}
    candidates = used or set(meshes.values())
    sizes = {m.num_devices for m in candidates}
    if not sizes:
        raise SdylogError("the module has no mesh to simulate")
    if len(sizes) > 1:
        raise SdylogError(f"the module's meshes have different device counts {sorted(sizes)}")
    return max(candidates, key=lambda m: len(m.axes))


def _compare(got, want, rtol, atol) -> tuple[bool, float]:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False, float("inf")
    if is_float(want.dtype) or is_complex(want.dtype):
        g = got.astype(np.complex128 if is_complex(want.dtype) else np.float64)
        w = want.astype(g.dtype)
        both_nan = np.isnan(g) & np.isnan(w)
        err = np.where(both_nan, 0, np.abs(g - w))
        ok = bool(np.all((err <= atol + rtol * np.abs(w)) | both_nan))
        return ok, float(err.max()) if err.size else 0.0
    eq = got == want
    return bool(np.all(eq)), float(np.count_nonzero(~eq))


def simulate_text(text: str, filename: str, seed: int = 0, entry: str = "main",
                  rtol: float = 1e-4, atol: float = 1e-5, pass_options: str | None = None,
                  pipeline: list[str] | None = None, engine: str | None = None,
                  progress=None) -> SimulationReport:
    """`pass_options`: options of -sdy-convert-global-to-local, as on the command line.
    `pipeline`: `sdylog opt` flags run first on the sharded side (propagation, reshards...),
    for modules whose shardings and collectives are not yet explicit.
    `progress`: a sdylog.progress.Progress told each step."""
    from sdylog.passes import PassContext, lookup, parse_options
    from sdylog.progress import Progress

    progress = progress or Progress(False)
    progress.step("the whole program on one device")

    global_module = parse_module(text, filename)
    with global_module.context:
        func = _entry(global_module, entry)
        mesh = _mesh_for(global_module, func)
        inputs = random_inputs(func, seed, filename)
        n_results = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results)
        arg_sh = [irs.func_arg_sharding(func, i) for i in range(len(inputs))]
        res_sh = [irs.func_result_sharding(func, i) for i in range(n_results)]
        meshes = meshes_of_module(global_module)
        reference = Program(global_module, filename).run(entry, inputs, DeviceRuntime(stats=CollectiveStats()))

    local_module = parse_module(text, filename)
    with local_module.context:
        if pipeline:
            progress.step(" ".join(pipeline))
            from sdylog.passes.driver import parse_flags, run_passes
            run_passes(local_module, parse_flags(list(pipeline)), PassContext(filename=filename, engine=engine))
            func = _entry(local_module, entry)   # the pipeline may have set shardings
            arg_sh = [irs.func_arg_sharding(func, i) for i in range(len(inputs))]
            res_sh = [irs.func_result_sharding(func, i) for i in range(n_results)]
            meshes = meshes_of_module(local_module)
        name = "sdy-convert-global-to-local"
        progress.step("the per-device program")
        lookup(name).load()(local_module, parse_options(name, pass_options), PassContext(filename=filename))
        program = Program(local_module, filename)
        n = mesh.num_devices

        def shard(x, s: TensorSharding | None, d: int):
            if s is None or irs.is_replicated(s):
                return x
            return x[shard_slices(x.shape, s, irs.resolve_mesh(s, meshes), d)]

        progress.step(f"running it on {n} devices")
        runs = [[DeviceRun(entry, [shard(x, s, d) for x, s in zip(inputs, arg_sh)]) for d in range(n)]]
        stats = CollectiveStats()
        per_device = run_on_devices(program, runs, stats=stats)[0]

    progress.done()
    report = SimulationReport(n, stats)
    for i, want in enumerate(reference):
        want = np.asarray(want)
        ok_all, worst, bad = True, 0.0, []
        for d in range(n):
            ok, err = _compare(per_device[d][i], shard(want, res_sh[i], d), rtol, atol)
            worst = max(worst, err)
            if not ok:
                ok_all = False
                bad.append(d)
        detail = f"on devices {bad}" if bad else ""
        report.outputs.append(OutputCheck(i, want.shape, ok_all, worst, detail))
    return report


def simulate_main(path: str, **kwargs) -> SimulationReport:
    return simulate_text(read_source(path), display_name(path), **kwargs)
