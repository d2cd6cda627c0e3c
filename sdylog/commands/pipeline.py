"""The full pipeline on one module (`-sdy-propagation-pipeline`), timed phase
by phase, keeping the Datalog engine with every input and derived relation,
and the conflicts propagation left (rules/propagation/conflicts.dl) located
in the source before the export steps erase the ops they name."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property

from sdylog.ir import load_module, parse_module, print_module
from sdylog.ir.module import display_name, verify_module
from sdylog.ir.walk import symbol_name
from sdylog.passes import PassContext
from sdylog.progress import Progress


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
    jax_name: str | None = None   # the op's name in JAX's location (`jit(f)/dot_general`), when it has one

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        jax = f" [{self.jax_name}]" if self.jax_name else ""
        return f"{where}{self.op_name}{jax} factor {self.factor} ({self.kind}): {self.a} vs {self.b}"


@dataclass
class PipelineRun:
    module: object
    result: object                  # sdylog.propagation.driver.PropagationResult (None: explicit)
    ctx: PassContext
    seconds: dict = field(default_factory=dict)  # phase -> wall seconds
    conflicts: list[Conflict] = field(default_factory=list)
    named: object = None            # with keep_values: the input's NamedValues (sdylog/commands/values.py)
    names: object = None            # with name_ids: IdNames, names for the relations' ids
    collectives: list[dict] | None = None        # with --partition: every collective, costed
    inputs: tuple | None = None     # with name_ids or keep_values: (the input's values, entry function,
                                    # its results' JAX names), to name other runs' ids
    interface: object = None        # with keep_values: the entry function's shardings and types after
                                    # the export (api.EntryInterface), before --partition makes them local
    explicit: bool = False          # with --partition, a module holding its collectives already
                                    # (partition/pipeline.is_explicit): taken as written, not propagated
    completed_by: list[str] = field(default_factory=list)   # explicit: the partitioner's steps that still
                                    # changed it (partition/pipeline.explicit_steps)

    def text(self) -> str:
        return print_module(self.module, verified=True)   # (run_pipeline verified it)

    def value_tensors(self) -> dict:
        """Value id -> its tensor (the rules' tensor_of; read when asked: 0.4 ms on transformer_L48)."""
        return dict(self.result.engine.select("tensor_of", "v", "t"))

    @cached_property
    def needed(self):
        """The reshards and collectives the module needs to be partitioned
        (sdylog/reshard/report.py: what the export step wrote, what the
        full version would add, bytes per device); the module is not
        changed. Not for a run that went on to partition the module."""
        from sdylog.reshard.report import needed
        assert self.collectives is None, "the module is partitioned already"
        t = time.perf_counter()
        out = needed(self.module, self.ctx)
        self.seconds["reshards"] = time.perf_counter() - t
        return out

    @cached_property
    def reshard_names(self):
        """IdNames for the ids of the reshard rules' facts (`needed`'s,
        on the module the pipeline left); run with name_ids or keep_values.
        Propagation's (run.names) when the reshard step's facts followed
        propagation's (IdNames.following), else named afresh."""
        from sdylog.commands.values import IdNames
        facts = self.needed.inventory.facts
        followed = None if self.names is None else self.names.following(facts)
        if followed is not None:
            return followed
        values, main, result_names = self.inputs
        return IdNames(facts, values, main, self.ctx.filename, result_names)

    def save_database(self, path: str) -> None:
        """Every relation of the run into a new DuckDB file (run with
        name_ids): propagation's, then (unless the run partitioned the
        module) the reshard rules' (database_parts)."""
        from sdylog.commands.relations import save_database
        partitioned = self.collectives is not None
        handed = [self.result.engine, self.names]
        if not partitioned:
            from sdylog.reshard.explain import load_written_origins
            load_written_origins(self)   # (why_written*, as query reads them)
            handed += [self.needed.inventory.engine, self.reshard_names]
        save_database(path, database_parts(partitioned), handed)


def database_parts(partitioned: bool) -> list:
    """The DuckDB file's parts (DatabasePart): propagation's relations,
    then, unless the run partitioned the module, those the reshard rules and
    their costs derive (`needed`, `needed_bytes`, `why_pick`,
    `reshard_operand`, ...) but propagation's part holds; their value and op
    ids are the reshard run's (tables reshard_value_names, reshard_op_names)."""
    from sdylog.commands.relations import DatabasePart
    from sdylog.propagation.driver import propagation_program
    parts = [DatabasePart((propagation_program(),))]
    if not partitioned:
        from sdylog.reshard.costs import costs_program
        from sdylog.reshard.driver import reshard_program
        parts.append(DatabasePart((reshard_program(), costs_program()), frozenset(propagation_program().relations),
                                  "reshard_"))
    return parts


def parse_input(path: str, text: str | None = None):
    """The module at `path` (or `text`, which `path` names in diagnostics)."""
    if text is None:
        return load_module(path)
    return parse_module(text, display_name(path))


def import_shardings(module, ctx: PassContext):
    """What sdylog reads beyond Shardy's input: a GSPMD module's
    `mhlo.sharding` attributes become sdy meshes and shardings
    (-sdy-import-mhlo-shardings, with a note). Returns what to say once the
    run succeeded (note_nothing_to_propagate) when the module has neither."""
    from sdylog.passes import lookup
    from sdylog.passes.import_mhlo_shardings import has_mhlo_shardings

    with module.context:
        if has_mhlo_shardings(module):
            lookup("sdy-import-mhlo-shardings").load()(module, {}, ctx)
        elif not any(op.operation.name == "sdy.mesh" for op in module.body.operations):
            return module.operation.location
    return None


def note_nothing_to_propagate(location, filename: str) -> None:
    """The note for a module with no mesh and no sharding (after the run:
    an error in it comes first, alone)."""
    from sdylog.ir.rewrite import emit_note
    if location is not None:
        emit_note(location, "the module has no sdy.mesh and no mhlo.sharding: nothing to propagate "
                  "(no value gets a sharding)", filename)


@dataclass(frozen=True)
class EntryValue:
    """An argument or result of the entry function and its sharding."""
    what: str                 # "argument 0 (x)", "result 1"
    shape: tuple
    sharding: object          # TensorSharding or None
    axis_sizes: dict          # of the sharding's mesh
    loc: object               # where a note points


def entry_shardings(module) -> dict:
    """(kind, index) -> EntryValue of the entry function's arguments and results."""
    from sdylog.commands.values import arg_jax_name, main_name
    from sdylog.ir.shardings import Meshes, func_arg_shardings, func_result_shardings, func_type
    from sdylog.ir.types import shape_of
    from sdylog.ir.walk import func_ops
    from sdylog.model.sharding import TensorSharding

    main = main_name(module)
    out = {}
    with module.context:
        meshes = Meshes(module)

        def entry(what, t, s, loc):
            mesh = meshes.of(s) if s is not None else None
            return EntryValue(what, shape_of(t), s and TensorSharding.from_attr(s),
                              mesh.axis_sizes if mesh is not None else {}, loc)
        for fn in func_ops(module):
            if symbol_name(fn) != main or not len(fn.regions[0].blocks):
                continue
            args = list(fn.regions[0].blocks[0].arguments)
            ftype = func_type(fn)
            inputs, results = list(ftype.inputs), list(ftype.results)   # (each read makes a new list)
            for i, s in enumerate(func_arg_shardings(fn)):
                if s is not None:
                    name = arg_jax_name(args[i])
                    out[("arg", i)] = entry(f"argument {i}" + (f" ({name})" if name else ""), inputs[i], s,
                                            args[i].location)
            for i, s in enumerate(func_result_shardings(fn)):
                if s is not None:
                    out[("result", i)] = entry(f"result {i}", results[i], s, fn.location)
    return out


def note_rewritten(given: dict, final: dict, filename: str) -> None:
    """A note for each sharding of the entry function's interface that the
    user gave and the pipeline changed (other axes, not just closed or
    opened): the export shrinks one that does not divide its dimension
    (sdy-update-non-divisible-input-output-shardings)."""
    from sdylog.ir.rewrite import emit_note
    for key, before in given.items():
        after = final.get(key)
        if before.sharding is None or after is None or after.sharding is None:
            continue
        if [d.axes for d in before.sharding.dims] == [d.axes for d in after.sharding.dims]:
            continue
        why = not_dividing(before)
        emit_note(before.loc, f"the sharding {before.sharding} of {before.what} of the entry function became "
                  f"{after.sharding}" + (f": {why}" if why else ""), filename)


def not_dividing(v: EntryValue) -> str:
    """`dim 0 of size 10 does not divide into 4 shards` (the first such dimension)."""
    for d, (n, dim) in enumerate(zip(v.shape, v.sharding.dims)):
        k = 1
        for a in dim.axes:
            k *= a.size(v.axis_sizes.get(a.name, 1))
        if k > 1 and n % k:
            return f"dim {d} of size {n} does not divide into {k} shards"
    return ""


def run_pipeline(path: str, progress: Progress | None = None,
                 text: str | None = None, keep_values: bool = False, name_ids: bool = False,
                 on_imported=None, on_propagated=None, on_named=None, partition=None, provenance: bool = False,
                 export: bool = True, reshards: bool = False, keep_dead: bool = False) -> PipelineRun:
    """-sdy-propagation-pipeline on the module at `path` (or `text`, named
    `path`), as `sdylog opt` runs it (sdylog/passes/propagation_pipeline.py;
    a test checks both print the same), after import_shardings, one phase at a
    time so that each is timed and the conflicts are located before the export
    steps erase the ops they name. `name_ids`: names for the ids of the
    relations (run.names: query, --db, the report's unsharded tensors);
    `keep_values`: the input's values by name with what propagation gave
    each (run.named: explain, the API, the report).
    `on_imported()` is called once the import passes are done, before
    propagation (`run --db` starts its file then: its thread's Python,
    importing duckdb and declaring the relations, runs while the rules do,
    which release the GIL, not beside the naming and the import passes;
    and an input that does not parse or import costs it nothing);
    `on_propagated(result, named)` (the PropagationResult, run.named) is
    called once propagation is done, before its ids are named and before
    propagation erases the dead ops (which, like the export, changes
    neither the relations nor their names, but erases ops the facts hold:
    what reads their handles, the conflicts' locations, the values' names,
    reads them first): `run --db` starts writing propagation's
    relations then (while the ids are named), explain reads the
    derivations. `on_named(names)` (run.names) is called once the ids are
    named, before the export (`run --db` writes the names while the module
    is exported and the reshard rules run, not after the run).
    `provenance`: propagation records them (explain). Without
    `export`, the run ends with propagation; with `keep_dead` too, the dead
    ops propagation erases stay (its facts go on naming them: explain's
    API explains after the run).
    With `partition` (PartitionerOptions), then the partitioner's passes to
    the per-device program (sdylog/partition/pipeline.py), its collectives
    costed. `reshards`: the reshard step's decisions (run.needed) are made
    before the pipeline's census scope closes, so that they read the facts
    the pipeline kept and followed instead of extracting them again (~0.18 s
    of a 1.1 s `sdylog run` on transformer_L48); not with `partition`."""
    from sdylog.passes.census import shared_census
    from sdylog.passes.propagation_pipeline import export_phase, import_phase, propagation_phase

    assert export or partition is None, "partitioning follows the export"
    assert not (keep_dead and export), "the export reads a module without dead code"
    assert not (reshards and partition), "the reshards needed are those of the exported module"
    progress = progress or Progress(False)
    seconds: dict[str, float] = {}

    nested = [0.0]   # (the time of the phases run inside the running one: its own leaves them out)

    def phase(name, fn, *args, **kwargs):
        progress.step(name)
        t, before = time.perf_counter(), nested[0]
        out = fn(*args, **kwargs)
        took = time.perf_counter() - t
        seconds[name] = took - (nested[0] - before)
        nested[0] = before + took
        return out

    module = phase("parse", parse_input, path, text)
    ctx = PassContext(filename=display_name(path), provenance=provenance)
    meshless = import_shardings(module, ctx)
    if partition is not None:
        from sdylog.partition.pipeline import is_explicit
        if is_explicit(module):
            return _as_written(module, ctx, partition, phase, seconds, keep_values, progress)
    given = entry_shardings(module)
    named = inputs = names = None
    if keep_values or name_ids:
        from sdylog.commands.values import IdNames, NamedValues, functions_of, main_name
        if keep_values:
            named = phase("names", NamedValues.of_input, module, ctx.filename)
            inputs = (named.values, main_name(module), named.result_names)
        else:
            inputs = phase("names", IdNames.before_import, module, ctx.filename)
        results = functions_of(module)[1].get(inputs[1], 0)
        result_names = list(inputs[2]) + [None] * (results - len(inputs[2]))
    with module.context, shared_census(ctx):
        phase("import", import_phase, module, ctx)
        if on_imported is not None:
            on_imported()
        conflicts, ids = [], []

        def propagated(result):   # (before propagation erases the dead ops: the facts' handles on them die)
            conflicts.extend(locate_conflicts(result, ctx.filename))
            if named is not None:
                named.take_propagated(result.facts)
            if on_propagated is not None:
                on_propagated(result, named)
            if name_ids:
                ids.append(phase("ids", IdNames, result.facts, inputs[0], inputs[1], ctx.filename, result_names,
                                 result.engine.select("tensor_of", "v", "t"), named and named.names))
                if on_named is not None:
                    on_named(ids[0])
        result = phase("propagation" + (" (with provenance)" if provenance else ""), propagation_phase, module, ctx,
                       before_erasing=propagated, keep_dead=keep_dead)
        ctx.provenance = False   # (only propagation's derivations are explained: the reshard rules record none)
        names = ids[0] if ids else None
        if export:
            phase("export", export_phase, module, ctx)
            # (the pipeline's steps are not verified one by one: its result is, as `sdylog opt` does;
            # a run stopped before the export has none: explain's, whose module may hold what only the
            # export makes valid, e.g. a named computation of the input edged twice by the import)
            verify_module(module, ctx.filename)
        final = entry_shardings(module) if export else given   # (before the partitioner drops them)
        run = PipelineRun(module, result, ctx, seconds, conflicts, named, names,
                          inputs=inputs and (inputs[0], inputs[1], result_names))
        if named is not None:
            from sdylog.api import EntryInterface
            run.interface = EntryInterface.of(module)
        if reshards:
            progress.step("reshards")
            run.needed
    if partition is not None:
        from sdylog.partition.pipeline import partition_module
        run.collectives = partition_module(module, ctx, partition, explicit=False, propagated=True,
                                           phase=phase).collectives
    note_rewritten(given, final, ctx.filename)
    note_nothing_to_propagate(meshless, ctx.filename)
    progress.done()
    return run


def _as_written(module, ctx, partition, phase, seconds, keep_values: bool, progress) -> PipelineRun:
    """`run --partition` on an explicit module (one holding sdy collectives
    and no reshard or sharding constraint left), as `sdylog simulate` takes
    it: as written, only given what the partitioner still runs after the
    reshards (partition/pipeline.explicit_steps), its collectives costed and
    the program made local.
    Propagating it and inserting the reshards again would reduce what its
    collectives reduced already (an all_reduce after a reduce's own).
    `keep_values`: its values and their shardings as written (run.named)."""
    from sdylog.partition.pipeline import partition_module
    run = PipelineRun(module, None, ctx, seconds, explicit=True)
    if keep_values:
        from sdylog.api import EntryInterface
        from sdylog.commands.values import NamedValues
        from sdylog.ir.shardings import get_sharding
        from sdylog.model.sharding import TensorSharding
        named = run.named = phase("names", NamedValues.of_input, module, ctx.filename)
        with module.context:
            named.shardings = {id(iv): [None if a is None else TensorSharding.from_attr(a)]
                               for iv in named.values for a in [get_sharding(iv.handle)]}
        run.interface = EntryInterface.of(module)
    partitioned = partition_module(module, ctx, partition, explicit=True, phase=phase)
    run.collectives, run.completed_by = partitioned.collectives, partitioned.completed_by
    progress.done()
    return run


def propagation_facts(path: str, conservative: bool = False):
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
    ctx = PassContext(filename=display_name(path), derive="write-back")
    options = {**lookup("sdy-user-priority-propagate").options, "conservative-propagation": conservative}
    with module.context, shared_census(ctx):
        import_phase(module, ctx)
        result = run_propagation(module, options, ctx, **PIPELINE_PROPAGATION)
    return result.facts, run_facts(PropagationOptions(**PIPELINE_PROPAGATION, conservative=conservative))


def locate_conflicts(result, filename: str) -> list[Conflict]:
    """The `conflict` relation with op names, source locations and shardings
    (read while the ops it names are still in the module: before
    propagation erases the dead ones, run_propagation's `before_erasing`)."""
    engine, facts = result.engine, result.facts
    if "conflict" not in engine.relations:
        return []
    # program order (op ids are pre-order positions), then (a stable sort) by
    # source location: equal locations keep program order
    rows = sorted(engine.select("conflict", "op", "op_name", "factor", "kind", "a", "t_a", "dim_a", "b", "t_b",
                                "dim_b", ordered=True), key=lambda r: (r[0] < 0, abs(r[0]), r[2:]))
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
        where = _op_where(facts, o, tb, filename)
        out.append(Conflict(where.source, name, f, kind,
                            f"{a} dim {da} {dims.get((ta, da), '{}')}",
                            f"{b} dim {db} {dims.get((tb, db), '{}')}", o, where.name))
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

    from sdylog.ir.rewrite import owning_op

    owner = edge.operands[0]
    name = owning_op(owner).name   # (the Operation's: an OpView's `name` may be its name attribute)
    if isinstance(owner.owner, ir.Block):
        return f"{name} block argument {ir.BlockArgument(owner).arg_number}"
    return f"{name} result {ir.OpResult(owner).result_number}"


def _op_where(facts, o: int, t_b: int, filename: str):
    """The op's source position and JAX name (sdylog.ir.locations.Where)."""
    from sdylog.ir.locations import where
    if o >= 0:
        op = facts.ops[o]
    else:  # main's result link -1 - i: its tensor b is the function result slot
        func, _ = facts.func_results[t_b]
        body = func.regions[0].blocks[0].operations
        op = body[len(body) - 1]   # its func.return
    return where(op, filename)


def _dim_shardings(engine, facts, tensors: set) -> dict:
    """(tensor, dim) -> its final axes as `{"x", "y":(1)2}`, for `tensors`."""
    from sdylog.model.axis import AxisRef
    from sdylog.model.sharding import DimSharding

    mesh_of = {t: m for t, m in engine.select("final_mesh", "t", "mesh") if t in tensors}
    axes: dict = {}
    for t, d, pos, a, pre, size in engine.select("final_dim_axis", "t", "d", "pos", "axis", "pre_size", "size",
                                                 ordered=True):
        if t in tensors:
            full = facts.meshes[mesh_of[t]].axis_sizes.get(a) if t in mesh_of else None
            ref = AxisRef.of_interval(a, pre, pre * size, full)
            axes.setdefault((t, d), []).append((pos, ref))
    return {k: str(DimSharding(tuple(r for _, r in sorted(v)))) for k, v in axes.items()}


def summary(run: PipelineRun, verbose: bool = False) -> list[str]:
    """The report's lines that do not depend on time: values sharded (and
    why the others are not: rules/propagation/unsharded.dl), the conflicts
    count, the reshards and all-reduces (and other collectives) the module
    needs with their bytes per device; with `verbose`, one line per
    conflict, per tensor left unsharded (named when the run has
    run.names), and per reshard and collective."""
    from sdylog.reshard.report import summary_lines
    engine = run.result.engine
    lines = unsharded_lines(run, verbose)
    if "conflict" in engine.relations:
        ops = {c.op for c in run.conflicts}
        lines.append(f"conflicts: {len(run.conflicts)} (at {len(ops)} op{'s' if len(ops) != 1 else ''})")
        if verbose:
            lines.extend(f"  {c}" for c in run.conflicts)
    if run.collectives is not None:   # (partitioned: report() lists the program's collectives)
        return lines
    return lines + summary_lines(run.needed, verbose)


UNSHARDED_REASONS = ("closed", "conflict", "unreached", "manual", "scalar")


def unsharded_lines(run: PipelineRun, verbose: bool = False) -> list[str]:
    """`values sharded: K of N` (a value is sharded when its tensor got an
    axis), then why the others are not, in a word each: counts, and with
    `verbose` each such tensor with its values' names."""
    values = len(run.result.facts.live_value_ids())
    by_reason = unsharded_by_reason(run)
    if by_reason is None:   # (rules without the report)
        sharded = {v for (v,) in run.result.engine.select("final_value", "v")}
        return [f"values sharded: {len(sharded)} of {values}"]
    unsharded = sum(len(vs) for vs in by_reason.values())
    lines = [f"values sharded: {values - unsharded} of {values}"]
    if unsharded:
        counts = ", ".join(f"{r} {len(by_reason[r])}" for r in UNSHARDED_REASONS if r in by_reason)
        lines.append(f"values not sharded: {unsharded} ({counts})")
    if verbose:   # (scalars only counted: every reduction body has some)
        lines += [f"  {text}: {r}" for r, text in unsharded_tensors(run, by_reason)]
    return lines


def unsharded_by_reason(run: PipelineRun) -> dict | None:
    """reason -> the value ids left unsharded for it (None: rules without the report)."""
    engine = run.result.engine
    if "unsharded" not in engine.relations:
        return None
    reason = dict(engine.select("unsharded", "t", "reason", ordered=True))
    tensor_of = run.value_tensors()
    by_reason: dict[str, list] = {}
    for v in run.result.facts.live_value_ids():
        t = tensor_of.get(v)
        why = "scalar" if t is None else reason.get(t)   # (a value no tensor holds: a token, say)
        if why is not None:
            by_reason.setdefault(why, []).append(v)
    return by_reason


def unsharded_tensors(run: PipelineRun, by_reason: dict) -> list[tuple[str, str]]:
    """(reason, the tensor's text) of each tensor left unsharded, but scalars."""
    tensor_of = run.value_tensors()
    out = []
    for r in UNSHARDED_REASONS[:-1]:
        shown = set()
        for t, vs in _by_tensor(by_reason.get(r, ()), tensor_of).items():
            text = _tensor_text(run, t, vs)
            if text not in shown:   # (copies the import made of one value read alike)
                shown.add(text)
                out.append((r, text))
    return out


def _by_tensor(values, tensor_of) -> dict:
    out: dict = {}
    for v in values:
        out.setdefault(tensor_of.get(v, v), []).append(v)
    return out


def _tensor_text(run: PipelineRun, t: int, values: list[int]) -> str:
    """`%3 (stablehlo.add at f.mlir:3:8)`: the tensor's input name, where its
    first value with an input name comes from."""
    names = run.names
    if names is None:
        return f"tensor {t}"
    named = [v for v in values if not names.value(v).startswith("<")] or values
    return f"{names.value(t)} ({names.where(named[0])})"


def report_data(run: PipelineRun) -> dict:
    """The whole report (`sdylog run --report FILE.json`): every value with
    its sharding, the values sharded and why the others are not, the
    conflicts, every reshard and collective the module needs (op,
    location, shardings, bytes per device), the time of each phase (an
    explicit module under --partition: `"explicit": true`, the partitioner's
    steps that still changed it (`"completed_by"`), its values with the
    shardings written, its collectives and the times). The run must keep
    its values (run_pipeline(keep_values=True))."""
    from sdylog.api import collect_values
    values, _, _ = collect_values(run)   # (what Propagation.values holds, without printing the module again)
    values = [{"name": v.name, "mlir_name": v.mlir_name, "shape": list(v.shape), "element": v.element,
               "sharding": None if v.sharding is None else str(v.sharding), "op": v.op,
               "location": v.location} for v in values.values()]
    if run.explicit:   # (taken as written: no propagation, its values' shardings and collectives as written)
        return {"file": run.ctx.filename, "explicit": True, "completed_by": list(run.completed_by),
                "values": values, "collectives": list(run.collectives),
                "totals": {"bytes_per_device": sum(c["bytes_per_device"] for c in run.collectives)},
                "seconds": dict(run.seconds)}
    by_reason = unsharded_by_reason(run) or {}
    unsharded = sum(len(vs) for vs in by_reason.values())
    values_count = len(run.result.facts.live_value_ids())
    if run.collectives is None:
        items = [i.as_dict() for i in run.needed.items]
        totals = {kind: {"count": n, "written_by_export": written, "bytes_per_device": total}
                  for kind, (n, written, total) in run.needed.totals().items()}
    else:   # (--partition: the collectives of the program each device runs)
        items = list(run.collectives)
        totals = {"bytes_per_device": sum(c["bytes_per_device"] for c in run.collectives)}
    return {
        "file": run.ctx.filename,
        "values": values,
        "sharded": {"values": values_count - unsharded, "of": values_count},
        "unsharded": {"counts": {r: len(by_reason[r]) for r in UNSHARDED_REASONS if r in by_reason},
                      "tensors": [{"tensor": text, "reason": r} for r, text in unsharded_tensors(run, by_reason)]},
        "conflicts": [{"location": c.location, "op": c.op_name, "jax_name": c.jax_name, "factor": c.factor,
                       "kind": c.kind, "a": c.a, "b": c.b} for c in run.conflicts],
        "reshards": [i for i in items if i["kind"] == "reshard"],
        "collectives": [i for i in items if i["kind"] != "reshard"],
        "totals": totals,
        "seconds": dict(run.seconds),
    }


def report(run: PipelineRun, verbose: bool = False) -> str:
    """The short report `sdylog run` prints on stderr: the summary, then the
    time of each phase (and the propagation driver's own steps, CPU time)."""
    if run.explicit:   # (nothing propagated: its collectives as written)
        lines = ["explicit module (it holds its collectives): taken as written, not propagated"]
    else:
        lines = summary(run, verbose)   # (first: it times the reshard decisions)
    steps = dict(run.seconds)
    for timing in run.ctx.report.get("propagation", []):
        for k, v in timing.items():
            steps[f"propagation.{k} (cpu)"] = v
    time_line = "time: " + ", ".join(f"{k} {v:.3f}s" for k, v in steps.items())
    if run.collectives is not None:
        from sdylog.partition.pipeline import collectives_table
        lines += collectives_table(run.collectives)
    return "\n".join(lines + [time_line])
