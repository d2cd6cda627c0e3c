"""The full pipeline on one module (`-sdy-propagation-pipeline`), timed phase
by phase, keeping the Datalog engine with every input and derived relation,
and the conflicts propagation left (rules/propagation/conflicts.dl) located
in the source before the export steps erase the ops they name."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from sdylog.ir import load_module, print_module
from sdylog.ir.diagnostics import format_location
from sdylog.ir.module import display_name, verify_module
from sdylog.ir.walk import symbol_name
from sdylog.passes import PassContext


@dataclass(frozen=True)
class Conflict:
    """One row of the `conflict` relation, for people: where, and the two
    tensors' shardings of the dimensions holding the factor."""
    location: str | None    # file:line:col of the op, when it has one
    op_name: str
    factor: int
    kind: str               # "diverge" or "prefix" (see conflicts.dl)
    a: str                  # e.g. 'operand 0 dim 1 {"x"}'
    b: str
    op: int                 # the op's id in the facts (< 0: a result of main)

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.op_name} factor {self.factor} ({self.kind}): {self.a} vs {self.b}"


@dataclass
class PipelineRun:
    module: object
    result: object                  # sdylog.propagation.driver.PropagationResult
    ctx: PassContext
    seconds: dict = field(default_factory=dict)  # phase -> wall seconds
    conflicts: list[Conflict] = field(default_factory=list)

    def text(self) -> str:
        return print_module(self.module, verified=True)   # (run_pipeline verified it)


class Progress:
    """One line per phase on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def step(self, name: str) -> None:
        if self.enabled:
            sys.stderr.write(f"\r\x1b[K[sdylog] {name}...")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def run_pipeline(path: str, engine: str | None = None, progress: Progress | None = None) -> PipelineRun:
    """-sdy-propagation-pipeline on the module at `path`, as `sdylog opt` runs
    it (sdylog/passes/propagation_pipeline.py; a test checks both print the
    same), one phase at a time so that each is timed and the conflicts are
    located before the export steps erase the ops they name."""
    from sdylog.passes.census import shared_census
    from sdylog.passes.propagation_pipeline import export_phase, import_phase, propagation_phase

    progress = progress or Progress(False)
    seconds: dict[str, float] = {}

    def phase(name, fn, *args, **kwargs):
        progress.step(name)
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        seconds[name] = time.perf_counter() - t
        return out

    module = phase("parse", load_module, path)
    ctx = PassContext(filename=display_name(path), engine=engine)
    with module.context, shared_census(ctx):
        phase("import", import_phase, module, ctx)
        result = phase("propagation", propagation_phase, module, ctx)
        conflicts = locate_conflicts(result, ctx.filename)
        phase("export", export_phase, module, ctx)
        # (the pipeline's steps are not verified one by one: its result is, as `sdylog opt` does)
        verify_module(module, ctx.filename)
    progress.done()
    return PipelineRun(module, result, ctx, seconds, conflicts)


def propagation_facts(path: str, conservative: bool = False, engine: str | None = None):
    """The input relations propagation reads in `-sdy-propagation-pipeline`
    on the module at `path` (after the import passes and what the
    propagation pass does before its facts), and its run configuration:
    (FactSet, {relation: rows}). Taken from a propagation run itself, so
    that they are what it read (the rules' run costs little next to the
    passes)."""
    from sdylog.passes import lookup
    from sdylog.passes.census import shared_census
    from sdylog.passes.propagation_pipeline import PIPELINE_PROPAGATION, import_phase
    from sdylog.propagation.driver import PropagationOptions, run_facts
    from sdylog.propagation.passes import run_propagation

    module = load_module(path)
    ctx = PassContext(filename=display_name(path), engine=engine, derive="write-back")
    options = {**lookup("sdy-user-priority-propagate").options, "conservative-propagation": conservative}
    with module.context, shared_census(ctx):
        import_phase(module, ctx)
        result = run_propagation(module, options, ctx, **PIPELINE_PROPAGATION)
    return result.facts, run_facts(PropagationOptions(**PIPELINE_PROPAGATION, conservative=conservative))


def locate_conflicts(result, filename: str) -> list[Conflict]:
    """The `conflict` relation with op names, source locations and shardings
    (read while the ops it names are still in the module)."""
    engine, facts = result.engine, result.facts
    if "conflict" not in engine.relations:
        return []
    # program order (op ids are pre-order positions), then (a stable sort) by
    # source location: equal locations keep program order
    rows = sorted(engine.read("conflict"), key=lambda r: (r[0] < 0, abs(r[0]), r[2:]))
    if not rows:
        return []
    dims = _dim_shardings(engine, facts, {t for r in rows for t in (r[5], r[8])})
    out = []
    for o, name, f, kind, a, ta, da, b, tb, db in rows:
        if o >= 0 and name in ("sdy.data_flow_edge", "sdy.func_data_flow_edge"):
            name = f"{name} ({_edge_owner(facts.ops[o])})"
        elif o < 0:
            func, i = facts.func_results[tb]
            name = f"{name} (@{symbol_name(func)} result {i})"
        out.append(Conflict(_op_location(facts, o, tb, filename), name, f, kind,
                            f"{a} dim {da} {dims.get((ta, da), '{}')}",
                            f"{b} dim {db} {dims.get((tb, db), '{}')}", o))
    out.sort(key=_source_order)
    return out


def _source_order(c: Conflict):
    """By line and column of the source (ops without a location last)."""
    if c.location is None:
        return (1, "", 0, 0)
    path, line, col = c.location.rsplit(":", 2)
    return (0, path, int(line), int(col))


def _edge_owner(edge) -> str:
    """What a data-flow edge op stands for: `stablehlo.while result 1`,
    `stablehlo.while block argument 1`, ..."""
    from jaxlib.mlir import ir

    owner = edge.operands[0]
    if isinstance(owner.owner, ir.Block):
        return f"{owner.owner.owner.name} block argument {ir.BlockArgument(owner).arg_number}"
    return f"{owner.owner.name} result {ir.OpResult(owner).result_number}"


def _op_location(facts, o: int, t_b: int, filename: str) -> str | None:
    if o >= 0:
        op = facts.ops[o]
    else:  # main's result link -1 - i: its tensor b is the function result slot
        func, _ = facts.func_results[t_b]
        body = func.regions[0].blocks[0].operations
        op = body[len(body) - 1]   # its func.return
    return format_location(op.location, filename)


def _dim_shardings(engine, facts, tensors: set) -> dict:
    """(tensor, dim) -> its final axes as `{"x", "y":(1)2}`, for `tensors`."""
    from sdylog.model.axis import AxisRef
    from sdylog.model.sharding import DimSharding

    mesh_of = {t: m for t, m in engine.read("final_mesh") if t in tensors}
    axes: dict = {}
    for t, d, pos, a, pre, size in engine.read("final_dim_axis"):
        if t in tensors:
            full = facts.meshes[mesh_of[t]].axis_sizes.get(a) if t in mesh_of else None
            ref = AxisRef.of_interval(a, pre, pre * size, full)
            axes.setdefault((t, d), []).append((pos, ref))
    return {k: str(DimSharding(tuple(r for _, r in sorted(v)))) for k, v in axes.items()}


def summary(run: PipelineRun, verbose: bool = False) -> list[str]:
    """The report's lines that do not depend on time: values sharded, the
    conflicts count (with `verbose`, one line per conflict)."""
    engine = run.result.engine
    sharded = {v for v, _t in engine.read("final_value")}
    values = len(run.result.facts.values)
    lines = [f"values sharded: {len(sharded)} of {values}"]
    if "conflict" in engine.relations:
        ops = {c.op for c in run.conflicts}
        lines.append(f"conflicts: {len(run.conflicts)} (at {len(ops)} op{'s' if len(ops) != 1 else ''})")
        if verbose:
            lines.extend(f"  {c}" for c in run.conflicts)
    return lines


def report(run: PipelineRun, verbose: bool = False) -> str:
    """The short report `sdylog run` prints on stderr: the summary, then the
    time of each phase (and the propagation driver's own steps, CPU time)."""
    steps = dict(run.seconds)
    for timing in run.ctx.report.get("propagation", []):
        for k, v in timing.items():
            steps[f"propagation.{k} (cpu)"] = v
    time_line = "time: " + ", ".join(f"{k} {v:.3f}s" for k, v in steps.items())
    return "\n".join(summary(run, verbose) + [time_line])
