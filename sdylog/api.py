"""sdylog from Python: propagate the shardings of a JAX program and read them.

    import jax, sdylog
    lowered = jax.jit(f, in_shardings=...).lower(x, w)
    result = sdylog.propagate(lowered)
    result.out_specs                 # (PartitionSpec('data', None),): one per result
    result.specs["x"]                # any value, by JAX's name (or MLIR's: "%3")
    result["%3"].sharding            # the full sdy sharding: <@mesh, [{"data"}, {}]>
    print(result.explain("result[0]"))
    print(result.show("x"))          # the devices' pieces of x
    result.reshards, result.collectives   # what partitioning needs, bytes per device

`propagate` takes a jax `Lowered`, a `jax.export.Exported`, MLIR text or a
path, runs what `sdylog run` runs (-sdy-propagation-pipeline, after reading a
GSPMD module's `mhlo.sharding`s), and keeps every value's sharding by name.
jax is imported only to make PartitionSpecs (`in_specs`, `out_specs`,
`specs`, `ValueSharding.spec`); everything else works without it.
"""
from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from functools import cached_property

from sdylog.ir.diagnostics import SdylogError
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding


@dataclass(frozen=True)
class ValueSharding:
    """One value of the program and the sharding propagation gave it."""
    name: str                         # how `specs`, `explain` and `show` name it: JAX's name, else MLIR's
    mlir_name: str                    # "@main:%arg0", "@main:%3", "@main:result0", "@relu:%1"
    shape: tuple[int, ...]
    element: str                      # "f32"
    element_bytes: int                # bytes per element as XLA stores it (0: unknown)
    sharding: TensorSharding | None   # None: none (a scalar, or code propagation did not see)
    mesh: Mesh | None                 # the sharding's mesh
    op: str | None                    # the op that makes it; None for an argument or result
    location: str                     # "m.py:7:20 (jit(f)/dot_general)", "?" when unknown
    copies: int = 1                   # values the import made of it (a function called twice, a split constant)

    @property
    def spec(self):
        """The sharding as a `jax.sharding.PartitionSpec` (None per
        unsharded dimension, an axis name, or a tuple of names); a sub-axis
        reads `"x:(1)2"`. An unsharded value's spec is `PartitionSpec()`."""
        return partition_spec(self.sharding)

    def __str__(self) -> str:
        return f"{self.name}: {self.element}[{','.join(map(str, self.shape))}] {self.sharding or 'unsharded'}"


def partition_spec(sharding: TensorSharding | None):
    """A jax PartitionSpec for an sdy sharding (its dimensions' axes; open
    or closed, priorities, replicated and unreduced axes are not kept)."""
    from jax.sharding import PartitionSpec

    if sharding is None:
        return PartitionSpec()
    entries = []
    for dim in sharding.dims:
        names = [a.name if a.sub is None else f"{a.name}:({a.sub.pre_size}){a.sub.size}" for a in dim.axes]
        entries.append(None if not names else names[0] if len(names) == 1 else tuple(names))
    return PartitionSpec(*entries)


class Propagation:
    """What `propagate` found. Values are named as JAX names them where it
    does (arguments: `x`, `params['w1']`; results: `result`, `result[1]`),
    else as MLIR prints the module (`%3` in the entry function, `@f:%2` in
    another, `%arg0`, `@main:result0`)."""

    def __init__(self, run, source_name: str, text: str | None, diagnostics: list[str]):
        self._run = run
        self._source_name = source_name
        self._text = text
        self.diagnostics: tuple[str, ...] = tuple(diagnostics)
        """Warnings and notes of the run (an unreadable GSPMD sharding, a module without a mesh, ...)."""
        self.conflicts = tuple(run.conflicts)
        """Where propagation left two tensors of an op sharded differently (pipeline.Conflict)."""
        self.module_text: str = run.text()
        """The propagated module, as `sdylog run` prints it."""
        self._values, self.inputs, self.outputs = collect_values(run)

    # ---- the values
    @property
    def values(self) -> dict[str, ValueSharding]:
        """Every value by name, in program order."""
        return dict(self._values)

    def __getitem__(self, name: str) -> ValueSharding:
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"no value {name!r}; values are {', '.join(list(self._values)[:20])}"
                           f"{', ...' if len(self._values) > 20 else ''}") from None

    @property
    def meshes(self) -> dict[str, Mesh]:
        from sdylog.model.mesh import meshes_of_module
        with self._run.module.context:
            return meshes_of_module(self._run.module)

    @property
    def in_shardings(self) -> tuple[TensorSharding | None, ...]:
        """The entry function's argument shardings (sdy), in order."""
        return tuple(v.sharding for v in self.inputs)

    @property
    def out_shardings(self) -> tuple[TensorSharding | None, ...]:
        """The entry function's result shardings (sdy), in order."""
        return tuple(v.sharding for v in self.outputs)

    @property
    def in_specs(self) -> tuple:
        """One PartitionSpec per argument of the entry function (JAX's
        arguments that the program keeps)."""
        return tuple(v.spec for v in self.inputs)

    @property
    def out_specs(self) -> tuple:
        """One PartitionSpec per result of the entry function."""
        return tuple(v.spec for v in self.outputs)

    @property
    def specs(self) -> dict:
        """Every value's PartitionSpec, by name."""
        return {name: v.spec for name, v in self._values.items()}

    @property
    def shardings(self) -> dict[str, TensorSharding | None]:
        """Every value's full sdy sharding (open/closed dimensions,
        priorities, replicated and unreduced axes), by name."""
        return {name: v.sharding for name, v in self._values.items()}

    # ---- what partitioning needs
    @property
    def reshards(self) -> tuple:
        """Every `sdy.reshard` the module needs to be partitioned (Shardy's
        full version of -sdy-insert-explicit-reshards after the pipeline,
        and those its export step wrote), as sdylog.reshard.inventory.Inserted:
        the op it is for, location, operand/result/use and index, mesh,
        source and target shardings, bytes per device."""
        return tuple(i for i in self._run.needed.items if i.kind == "reshard")

    @property
    def collectives(self) -> tuple:
        """Every collective the module needs besides reshards (all-reduces
        of sharded reduction factors and of unreduced values, ...), as
        Inserted (its kind, axes, bytes per device)."""
        return tuple(i for i in self._run.needed.items if i.kind != "reshard")

    # ---- words and pictures
    def explain(self, name: str, tree: bool = False) -> str:
        """Why `name` gets its sharding, and the reshards and collectives
        partitioning puts at it (what `sdylog explain` prints). Runs
        propagation again with provenance on, the first time."""
        from sdylog.commands.explain import explain_text
        return explain_text(self._explained, name, tree=tree, partitioned=self._run)

    @cached_property
    def _explained(self):
        from sdylog.commands.explain import run_with_provenance
        with contextlib.redirect_stderr(io.StringIO()):   # (its diagnostics are the run's, already kept)
            return run_with_provenance(self._source_name, text=self._text)

    def show(self, name: str, svg: str | os.PathLike | None = None) -> str:
        """How `name` lies over the devices (what `sdylog show` prints); with
        `svg`, also write that picture as an SVG file."""
        from sdylog import outputs
        from sdylog.commands.show import picture
        target = outputs.plan(os.fspath(svg), "svg") if svg is not None else None
        text, svg_text = picture(self._value(name), self.meshes, svg is not None)
        if target is not None:
            outputs.write_all([(target, svg_text)])
        return text

    def _value(self, name: str) -> ValueSharding:
        if name in self._values:
            return self._values[name]
        from sdylog.commands.values import resolve_name
        named = self._run.named
        targets = resolve_name(name, named.values, named.funcs, named.result_counts, named.result_names)
        t = targets[0]
        label = t.label if t.value is None else _mlir_name(t.value)
        for v in self._values.values():
            if v.mlir_name == label or (t.value is None and v.mlir_name == f"@{t.func}:result{t.result}"):
                return v
        raise SdylogError(f"{name} is not a value propagation saw")

    def to_duckdb(self, path: str | os.PathLike) -> None:
        """Save every relation (input facts and derived) in a DuckDB file
        (what `sdylog run --db` writes). Runs the pipeline again, naming the
        relations' ids, the first time (about as long as `propagate`); that
        run is kept with this object, and later calls reuse it."""
        from sdylog import outputs
        target = outputs.plan(os.fspath(path), "duckdb")
        outputs.write_all([(target, self._named_ids.save_database)])

    @cached_property
    def _named_ids(self):
        # (a run of its own: propagate's run names the values only, and the names of ids are read
        # before the export erases the ops they name; keep_values: the input's values, what
        # save_database's load_written_origins reads)
        from sdylog.commands.pipeline import run_pipeline
        with contextlib.redirect_stderr(io.StringIO()):   # (its diagnostics are self.diagnostics)
            return run_pipeline(self._source_name, text=self._text, name_ids=True, keep_values=True)

    def __repr__(self) -> str:
        sharded = sum(1 for v in self._values.values() if v.sharding is not None and v.sharding.used_axes())
        return (f"<sdylog.Propagation of {self._source_name}: {len(self._values)} values, {sharded} sharded, "
                f"{len(self.conflicts)} conflicts>")


def _mlir_name(iv) -> str:
    return f"@{iv.func}:{iv.name}"


@dataclass(frozen=True)
class EntryInterface:
    """The entry function's arguments' and results' shardings and types, and
    the meshes, as the pipeline leaves them after the export (run_pipeline
    reads them there: the partitioner then drops the shardings and meshes
    and gives the results their per-device types)."""
    main: str
    meshes: dict
    arg_shardings: list        # TensorSharding | None per argument
    result_shardings: list     # TensorSharding | None per result
    result_types: list         # (shape, element, element bytes) per result

    @staticmethod
    def of(module) -> "EntryInterface":
        from sdylog.commands.values import main_name
        from sdylog.ir.shardings import func_arg_shardings, func_result_shardings, func_type
        from sdylog.ir.types import element_bytes, element_type_text, shape_of
        from sdylog.ir.walk import func_ops, symbol_name
        from sdylog.model.mesh import meshes_of_module
        with module.context:
            main = main_name(module)
            fn = next(f for f in func_ops(module) if symbol_name(f) == main)
            return EntryInterface(
                main, meshes_of_module(module),
                [None if a is None else TensorSharding.from_attr(a) for a in func_arg_shardings(fn)],
                [None if a is None else TensorSharding.from_attr(a) for a in func_result_shardings(fn)],
                [(shape_of(t), element_type_text(t), element_bytes(t)) for t in func_type(fn).results])


def collect_values(run):
    """ValueSharding of every input value (its first copy's sharding after
    propagation), and of the entry function's arguments and results as the
    pipeline leaves them (after export: run.interface)."""
    from sdylog.commands.values import display_name

    named = run.named
    interface = run.interface or EntryInterface.of(run.module)
    main, meshes = interface.main, interface.meshes
    final_args, final_results, result_types = (interface.arg_shardings, interface.result_shardings,
                                               interface.result_types)

    def mesh_of(s):
        if s is None:
            return None
        return meshes.get(s.mesh) if isinstance(s.mesh, str) else s.mesh

    values: dict[str, ValueSharding] = {}
    inputs = []
    for iv in named.values:
        copies = named.shardings.get(id(iv), [])
        sharding = copies[0] if copies else None
        arg_index = iv.key[2] if iv.key[0] == "farg" and iv.func == main else None
        if arg_index is not None:
            sharding = final_args[arg_index]
        name = display_name(iv, main)
        if name in values:
            name = _mlir_name(iv)
        shape, element, size = named.types[id(iv)]
        v = ValueSharding(name, _mlir_name(iv), shape, element, size, sharding, mesh_of(sharding), iv.op,
                          iv.source, len(copies))
        values[name] = v
        if arg_index is not None:
            inputs.append(v)
    outputs = []
    for i, (shape, element, size) in enumerate(result_types):
        label = f"@{main}:result{i}"
        name = named.result_names[i] if i < len(named.result_names) and named.result_names[i] else label
        if name in values:
            name = label
        s = final_results[i]
        v = ValueSharding(name, label, shape, element, size, s, mesh_of(s), None, f"result {i} of @{main}")
        values[name] = v
        outputs.append(v)
    return values, tuple(inputs), tuple(outputs)


# ------------------------------------------------------------------ the entry point
def propagate(src) -> Propagation:
    """Propagate the shardings of `src` as `sdylog run` does.

    `src`: a jax `Lowered` (`jax.jit(f, in_shardings=...).lower(*args)`), a
    `jax.export.Exported`, MLIR text (StableHLO with `sdy` shardings, or
    GSPMD `mhlo.sharding`s), or the path of a file holding it. The rules run
    on sdylog's own engine (Soufflé is a cross-check of `sdylog datalog` only).
    Raises SdylogError on bad input; warnings and notes of the run are in
    `.diagnostics`."""
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.ir.module import read_source

    name, text = _source(src)
    if text is None:
        text = read_source(name)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run = run_pipeline(name, text=text, keep_values=True)
    diagnostics = [line for line in err.getvalue().splitlines() if line.strip()]
    return Propagation(run, name, text, diagnostics)


def _source(src) -> tuple[str, str | None]:
    """(a name for diagnostics, the MLIR text or None to read the file `name`)."""
    if isinstance(src, os.PathLike):
        return os.fspath(src), None
    if isinstance(src, str):
        if "\n" in src or src.lstrip().startswith(("module", "func.func", "sdy.mesh", "#")):
            return "<text>", src
        return src, None
    if hasattr(src, "mlir_module") and hasattr(src, "in_shardings_hlo"):      # jax.export.Exported
        return f"<exported {getattr(src, 'fun_name', '')}>", src.mlir_module()
    if hasattr(src, "as_text") and hasattr(src, "compile"):
        if hasattr(src, "input_shardings"):                                   # jax.stages.Compiled
            raise SdylogError("give the Lowered (jax.jit(f).lower(...)), not the Compiled: "
                              "its text is XLA's HLO, after partitioning")
        return "<lowered>", src.as_text(debug_info=True)
    raise SdylogError(f"cannot propagate a {type(src).__name__}: give a jax Lowered, a jax.export.Exported, "
                      "MLIR text or a path")
