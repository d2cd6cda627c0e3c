"""`sdylog simulate`: does the partitioned program compute what the unpartitioned one does?

0. A GSPMD module's `mhlo.sharding` attributes are read as `sdylog run`
   reads them (commands/pipeline.py import_shardings, with a note).
1. Random global inputs for the entry function (from the seed).
2. The module as given runs on one device: the unpartitioned computation
   (Shardy's collectives are identities in the global view).
3. The per-device program: a module whose collectives are explicit is taken
   as written; any other (a JAX export, a propagated module) goes through
   propagation and the partitioner first (sdylog/partition/pipeline.py).
   Every device of the mesh runs it on its shards of the inputs,
   collectives moving data between the devices' buffers.
4. Each device's results are compared with its shard of the global results
   (floats within a tolerance that by default follows their dtype:
   default_rtol).
   On a mismatch both programs run again, recording what each op computed,
   to name the first op whose per-device values differ and why when it can
   be told (sdylog/simulate/trace.py).
Host callbacks without results (jax.debug.print) are not run, on either
side (the report lists them: Program.skipped); one with results
(jax.pure_callback) stops the simulation at its location.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.ir.walk import symbol_name
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs
from sdylog.partition.shards import shard_index, shard_slices
from sdylog.simulate.dtypes import is_bool, is_complex, is_float, is_integer, is_unsigned, tensor_dtype
from sdylog.simulate.mesh import CollectiveStats, DeviceRun, run_on_devices
from sdylog.simulate.program import DeviceRuntime, Program
from sdylog.simulate.trace import combined


# Floats agree within atol + rtol * max|want| (_errors). By default rtol is
# DEFAULT_RTOL, or EPS_TIMES the machine epsilon of the compared value's
# dtype where that is larger: a sum computed in pieces rounds each piece to
# the dtype, which for bf16 (eps 2^-7) and f16 (2^-10) is more than 1e-4.
DEFAULT_RTOL, DEFAULT_ATOL, EPS_TIMES = 1e-4, 1e-5, 4


def default_rtol(dtype) -> float:
    """The relative tolerance of a float (or complex) dtype when none is
    given: f32 and f64 1e-4, f16 0.0039, bf16 0.031."""
    return max(DEFAULT_RTOL, EPS_TIMES * float(ml_dtypes.finfo(dtype).eps))


@dataclass
class OutputCheck:
    index: int
    shape: tuple
    ok: bool
    max_error: float
    detail: str = ""
    max_rel_error: float = 0.0


@dataclass
class SimulationReport:
    devices: int
    stats: CollectiveStats
    outputs: list[OutputCheck] = field(default_factory=list)
    collectives: list[dict] = field(default_factory=list)   # of the partitioned program, costed by the rules
    partitioned: bool = False           # the pipeline ran (False: the module was explicit, or --pipeline)
    difference: object | None = None    # trace.Difference: the first op that differs
    skipped_steps: list[str] = field(default_factory=list)
    skipped: list = field(default_factory=list)   # program.SkippedOp: host callbacks without results, not run

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    @property
    def bytes_per_device(self) -> int:
        return sum(c["bytes_per_device"] for c in self.collectives)

    def json(self) -> dict:
        return {"match": self.ok,
                "max_abs_error": max((o.max_error for o in self.outputs), default=0.0),
                "max_rel_error": max((o.max_rel_error for o in self.outputs), default=0.0),
                "collectives": self.collectives, "bytes_per_device": self.bytes_per_device,
                "devices": self.devices, "partitioned": self.partitioned,
                "outputs": [{"index": o.index, "shape": list(o.shape), "match": o.ok, "max_abs_error": o.max_error,
                             "max_rel_error": o.max_rel_error} for o in self.outputs],
                "first_difference": self.difference.json() if self.difference else None,
                "skipped_steps": self.skipped_steps,
                "skipped": [op.json() for op in self.skipped]}

    def text(self) -> str:
        from sdylog.partition.pipeline import collectives_table
        lines = [f"devices: {self.devices}", "", self.stats.table(), ""]
        lines += collectives_table(self.collectives) + [""]
        for o in self.outputs:
            status = "ok" if o.ok else "MISMATCH"
            lines.append(f"result #{o.index} {list(o.shape)}: {status} (max error {o.max_error:.3g})"
                         + (f" {o.detail}" if o.detail else ""))
        if self.difference is not None:
            lines.append(self.difference.text())
        lines += [op.text() for op in self.skipped]
        lines.append("")
        lines.append("PASS: sharded and unsharded results agree" if self.ok else
                     "FAIL: sharded and unsharded results differ")
        return "\n".join(lines)


def random_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Floats are normal with deviation 1/sqrt(largest dimension), as
    weights are initialized: through chains of dots, activations stay near 1
    and saturating functions (tanh, exp) do not turn the rounding of sums
    computed in pieces into large differences."""
    if is_bool(dtype):
        return rng.random(shape) < 0.5
    scale = 1.0 / np.sqrt(max(shape)) if len(shape) and max(shape) > 0 else 1.0
    if is_complex(dtype):
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(dtype)
    if is_float(dtype):
        return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype)
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
    if not candidates:   # (noted by simulate_text: e.g. a JAX gradient that dropped its only argument)
        return Mesh()
    sizes = {m.num_devices for m in candidates}
    if len(sizes) > 1:
        raise SdylogError(f"the module's meshes have different device counts {sorted(sizes)}")
    return max(candidates, key=lambda m: len(m.axes))


def _errors(got, want, rtol, atol) -> tuple[bool, float, float]:
    """(within tolerance, max absolute error, relative error). Floats are
    compared against the largest magnitude of `want` (|got - want| <= atol +
    rtol * max|want| everywhere): a sum computed in pieces on several
    devices rounds with the size of its terms, which near-zero results do
    not have; the relative error is the max absolute error over max|want|.
    `rtol` None: default_rtol of want's dtype.
    Integers and booleans must be equal (errors count differing elements)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False, float("inf"), float("inf")
    if is_float(want.dtype) or is_complex(want.dtype):
        if rtol is None:
            rtol = default_rtol(want.dtype)
        g = got.astype(np.complex128 if is_complex(want.dtype) else np.float64)
        w = want.astype(g.dtype)
        if not w.size:
            return True, 0.0, 0.0
        with np.errstate(all="ignore"):   # (inf - inf, overflow: values here, as in the runs)
            same = (g == w) | (np.isnan(g) & np.isnan(w))   # (equal infinities too)
            err = np.where(same, 0, np.abs(g - w))
            scale = float(np.max(np.where(np.isfinite(w), np.abs(w), 0)))
            worst = float(err.max())
            ok = bool(np.all(same | (err <= atol + rtol * scale)))
            return ok, worst, worst / max(scale, atol)
    eq = got == want
    bad = float(np.count_nonzero(~eq))
    return bool(np.all(eq)), bad, bad


def simulate_text(text: str, filename: str, seed: int = 0, entry: str = "main",
                  rtol: float | None = None, atol: float = DEFAULT_ATOL, pass_options: str | None = None,
                  pipeline: list[str] | None = None, explicit: bool | None = None,
                  halo_exchange: bool = True, progress=None) -> SimulationReport:
    """`rtol`: relative tolerance of floats (None: default_rtol of each
    compared value's dtype).
    `pass_options`: options of -sdy-convert-global-to-local, as on the command line.
    `pipeline`: `sdylog opt` flags run first on the partitioned side instead of
    sdylog's pipeline (then made local with -sdy-convert-global-to-local).
    `explicit`: take the module as written (None: when it holds sdy collectives
    and no reshard, partition/pipeline.is_explicit).
    `progress`: a sdylog.progress.Progress told each step."""
    from sdylog.commands.pipeline import import_shardings
    from sdylog.passes import PassContext
    from sdylog.passes.pipelines import PartitionerOptions
    from sdylog.progress import Progress
    from sdylog.simulate.trace import tag_ops

    progress = progress or Progress(False)
    progress.step("the whole program on one device")

    global_module = parse_module(text, filename)
    local_module = parse_module(text, filename)
    ctx = PassContext(filename=filename)
    # (a GSPMD module's shardings become sdy ones on the partitioned side; the
    # global run needs none: its `@Sharding` custom calls are identities)
    meshless = import_shardings(local_module, ctx)
    with local_module.context:
        mesh = _mesh_for(local_module, _entry(local_module, entry))
    with global_module.context:
        func = _entry(global_module, entry)
        inputs = random_inputs(func, seed, filename)
        tag_ops(global_module)
        whole = Program(global_module, filename)
        reference = whole.run(entry, inputs, DeviceRuntime(stats=CollectiveStats()))

    tag_ops(local_module)
    options = PartitionerOptions(enable_halo_exchange=halo_exchange)
    report = SimulationReport(mesh.num_devices, CollectiveStats(), skipped=whole.skipped)
    with local_module.context:
        report.partitioned, report.collectives, final = _make_local(local_module, ctx, options, pipeline,
                                                                     explicit, pass_options, progress)
        report.skipped_steps = list(ctx.report.get("skipped_steps", []))
        func = _entry(local_module, entry)
        arg_sh = [irs.func_arg_sharding(func, i) for i in range(len(inputs))]
        res_sh = [irs.func_result_sharding(func, i) for i in range(len(reference))]
        meshes = meshes_of_module(local_module)
        n = mesh.num_devices

        def shard(x, s: TensorSharding | None, d: int):
            if s is None or irs.is_replicated(s):
                return x
            return x[shard_slices(x.shape, s, irs.resolve_mesh(s, meshes), d)]

        def argument(x, s: TensorSharding | None, d: int):
            """Device d's part of argument x: its shard, which over unreduced
            axes is a partial sum (the whole on the first device of each
            group along them, zeros on the others)."""
            part = shard(x, s, d)
            if s is not None and s.unreduced and shard_index(d, irs.resolve_mesh(s, meshes), s.unreduced):
                return np.zeros_like(part)
            return part

        progress.step(f"running it on {n} devices")
        runs = [[DeviceRun(entry, [argument(x, s, d) for x, s in zip(inputs, arg_sh)]) for d in range(n)]]
        program = Program(local_module, filename)
        per_device = run_on_devices(program, runs, stats=report.stats)[0]
        for i, s in enumerate(res_sh):   # results unreduced on axes: their partial sums added up
            if s is not None and s.unreduced:
                for d, total in enumerate(combined([r[i] for r in per_device], s.unreduced,
                                                   irs.resolve_mesh(s, meshes))):
                    per_device[d][i] = total

    for i, want in enumerate(reference):
        want = np.asarray(want)
        check = OutputCheck(i, want.shape, True, 0.0)
        bad = []
        for d in range(n):
            ok, err, rel = _errors(per_device[d][i], shard(want, res_sh[i], d), rtol, atol)
            check.max_error, check.max_rel_error = max(check.max_error, err), max(check.max_rel_error, rel)
            if not ok:
                bad.append(d)
        check.ok = not bad
        check.detail = f"on devices {bad}" if bad else ""
        report.outputs.append(check)
    if not report.ok:
        progress.step("the first op that differs")
        report.difference = _first_difference(global_module, local_module, filename, entry, inputs, runs,
                                              meshes, final, rtol, atol)
    progress.done()
    if meshless is not None:
        from sdylog.ir.rewrite import emit_note
        emit_note(meshless, "the module has no sdy.mesh and no mhlo.sharding: every device runs the whole "
                  "program, simulated on one", filename)
    return report


def _make_local(module, ctx, options, pipeline, explicit, pass_options, progress) -> tuple[bool, list[dict], dict]:
    """The per-device program of `module` (in place, shardings kept for the
    comparison); whether sdylog's pipeline partitioned it, its collectives,
    and the shardings of the global program's ops (trace.final_shardings)."""
    from sdylog.partition.collective_costs import module_collectives
    from sdylog.partition.pipeline import partition_module
    from sdylog.passes import lookup, parse_options
    from sdylog.simulate.trace import final_shardings
    if pipeline:
        from sdylog.passes.driver import parse_flags, run_passes
        progress.step(" ".join(pipeline))
        run_passes(module, parse_flags(list(pipeline)), ctx)
        partitioned, collectives = False, module_collectives(module, ctx.filename)
        progress.step("the per-device program")
    else:
        progress.step("the per-device program")
        result = partition_module(module, ctx, options, global_to_local=False, explicit=explicit)
        partitioned, collectives = not result.explicit, result.collectives
    final = final_shardings(module)
    name = "sdy-convert-global-to-local"
    g2l = parse_options(name, pass_options)
    if not pass_options:   # (the partitioner's counts)
        g2l.update({"replica-count": options.replica_count, "partition-count": options.partition_count})
    lookup(name).load()(module, g2l, ctx)
    return partitioned, collectives, final


def _first_difference(global_module, local_module, filename, entry, inputs, runs, meshes, final, rtol, atol):
    """Both programs again, recording what their ops computed: the first op
    whose per-device values differ (trace.first_difference)."""
    from sdylog.simulate.trace import Tracer, first_difference
    ref, dev = Tracer(filename), Tracer(filename)
    with global_module.context:
        Program(global_module, filename, tracer=ref).run(entry, inputs, DeviceRuntime(stats=CollectiveStats()))
    with local_module.context:
        try:
            run_on_devices(Program(local_module, filename, tracer=dev), runs)
        except SdylogError:
            return None

    def close(got, want):
        ok, err, _ = _errors(got, want, rtol, atol)
        return ok, err
    return first_difference(ref, dev, len(runs[0]), meshes, close, final)


def simulate_main(path: str, **kwargs) -> SimulationReport:
    return simulate_text(read_source(path), display_name(path), **kwargs)
