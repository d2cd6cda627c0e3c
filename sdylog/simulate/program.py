"""Compiling functions into lists of closures, and running them.

Each `func.func` is compiled once, on first use, into a `CompiledFunction`:
every SSA value (block arguments and op results, nested regions included) gets
a slot in one flat environment list, and every op becomes a closure
`step(env, rt)` that reads its operand slots and writes its result slots. All
attribute decoding happens at compile time, so running a function again (a
while body, a reduction body, a callee) costs only the closures' numpy work.

`rt` is the `DeviceRuntime` of the device running the step: its ids, and the
communicator collectives use (None when one device runs alone).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.walk import symbol_name
from sdylog.simulate.dtypes import UnsupportedType, tensor_dtype, tensor_shape

Step = Callable[[list, "DeviceRuntime"], None]


@dataclass
class DeviceRuntime:
    """Who is running: ids as `replica_id`/`partition_id` report them, and the
    communicator that carries collectives between simulated devices."""
    replica_id: int = 0
    partition_id: int = 0
    num_replicas: int = 1
    num_partitions: int = 1
    comm: object | None = None       # sdylog.simulate.mesh.Communicator
    stats: object | None = None      # CollectiveStats of nested runs when there is no comm
    # This device runs the body of a manual computation of an unpartitioned
    # program (each value is its shard on the manual axes only): a manual
    # computation nested there still slices and assembles on its own axes.
    in_manual_body: bool = False
    # Per-op invocation counters, so the n-th execution of a collective on one
    # device meets the n-th execution of the same collective on the others.
    counters: dict = field(default_factory=dict)

    @property
    def device_id(self) -> int:
        return self.replica_id * self.num_partitions + self.partition_id

    @property
    def is_single(self) -> bool:
        return self.comm is None

    @property
    def global_view(self) -> bool:
        """Values are whole tensors on every axis no manual computation made
        per-device: Shardy's collectives and reshards change nothing."""
        return self.comm is None or self.in_manual_body

    @property
    def collective_stats(self):
        return self.comm.stats if self.comm is not None else self.stats

    def next_count(self, key) -> int:
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n


class Aborted(Exception):
    """Raised in a device whose peers failed: the run stops, the peer's error is the one reported."""


class ExecutionError(SdylogError):
    """A failure while running a program (bad index, failed check, ...)."""


@dataclass
class Region:
    """A compiled region (its first block): argument slots, steps, result slots."""
    arg_slots: list[int]
    steps: list[Step]
    result_slots: list[int]

    def run(self, env: list, rt: DeviceRuntime, args) -> list:
        for s, a in zip(self.arg_slots, args):
            env[s] = a
        for step in self.steps:
            step(env, rt)
        return [env[s] for s in self.result_slots]


class CompiledFunction:
    def __init__(self, name: str):
        self.name = name
        self.n_slots = 0
        self.body: Region | None = None
        self.arg_types: list = []
        self.result_types: list = []

    def __call__(self, args, rt: DeviceRuntime | None = None) -> list:
        rt = rt or DeviceRuntime()
        with np.errstate(all="ignore"):  # overflow/NaN are values here, not errors
            return self.call(args, rt)

    def call(self, args, rt: DeviceRuntime) -> list:
        """A call from a running function (func.call in a loop body): numpy's
        error state is already the caller's."""
        return self.body.run([None] * self.n_slots, rt, args)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3   # (glibc's malloc.h)
_malloc_set = False


def keep_freed_memory() -> None:
    """Have glibc's malloc keep freed buffers for the next arrays instead of
    handing them back to the system.

    Every op makes new arrays, of hundreds of KB for a transformer layer's
    activations; with glibc's defaults blocks of that size are mapped anew,
    or cut off the heap once freed, so that each new array faults its pages
    in again: transformer_L2's per-device program on 8 devices took 28,000
    page faults a run, a third of its CPU time. Now blocks up to 32 MB come
    from the heap, which keeps up to 64 MB free at its top. Once per process;
    nothing where the C library has no `mallopt`."""
    global _malloc_set
    if _malloc_set:
        return
    _malloc_set = True
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 64 << 20)


@dataclass(frozen=True)
class SkippedOp:
    """An op the simulator does not execute: a host callback without results."""
    location: str      # `file:line:col (jit(f)/debug_print)`
    target: str        # its custom_call target

    def json(self) -> dict:
        return {"op": f"stablehlo.custom_call @{self.target}", "location": self.location}

    def text(self) -> str:
        return (f"not executed: custom_call @{self.target} at {self.location}, a host callback without "
                "results (jax.debug.print): the results do not depend on it")


class Program:
    """A module's functions, compiled lazily by symbol name. With a `tracer`
    (sdylog/simulate/trace.py) each tagged op also records its results.

    JAX's host callbacks call Python functions the module does not hold. One
    without results (jax.debug.print, io_callback without results) changes
    no value: it compiles to nothing, and `skipped` lists it (where, and its
    custom_call target); one with results (jax.pure_callback) is an error at
    its location."""

    def __init__(self, module: ir.Module, filename: str | None = None, tracer=None):
        keep_freed_memory()
        self.module = module
        self.filename = filename
        self.tracer = tracer
        self.funcs = {symbol_name(op): op for op in module.body.operations
                      if op.operation.name == "func.func"}
        self.compiled: dict[str, CompiledFunction] = {}
        self._lock = threading.RLock()
        from sdylog.model.mesh import meshes_of_module
        self.meshes = meshes_of_module(module)
        self.skipped: list[SkippedOp] = []   # the host callbacks not executed, in compile order

    def function(self, name: str, at=None) -> CompiledFunction:
        fn = self.compiled.get(name)
        if fn is not None:
            return fn
        with self._lock:
            fn = self.compiled.get(name)
            if fn is None:
                if name not in self.funcs:
                    if at is not None:
                        raise error_at(at, f"no function named @{name}", self.filename)
                    raise SdylogError(f"no function named @{name}")
                fn = CompiledFunction(name)
                self.compiled[name] = fn  # before compiling: recursive calls find it
                try:
                    FunctionCompiler(self, fn).compile(self.funcs[name])
                except BaseException:
                    del self.compiled[name]
                    raise
        return fn

    def run(self, name: str, args, rt: DeviceRuntime | None = None) -> list:
        return self.function(name)(list(args), rt)


class FunctionCompiler:
    """Slot assignment and op lowering for one function (nested regions share its slots)."""

    def __init__(self, program: Program, fn: CompiledFunction):
        self.program = program
        self.fn = fn
        self.filename = program.filename
        self.slots: dict = {}
        self._aliases = AliasInfo()

    # --- slots -------------------------------------------------------------------
    def slot(self, value) -> int:
        s = self.slots.get(value)
        if s is None:
            s = self.fn.n_slots
            self.fn.n_slots += 1
            self.slots[value] = s
        return s

    def new_slot(self) -> int:
        s = self.fn.n_slots
        self.fn.n_slots += 1
        return s

    # --- compiling ----------------------------------------------------------------
    def compile(self, func_op) -> None:
        ftype = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value)
        self.fn.arg_types = list(ftype.inputs)
        self.fn.result_types = list(ftype.results)
        region = func_op.regions[0]
        if not region.blocks:
            raise error_at(func_op, f"function @{self.fn.name} has no body", self.filename)
        self.fn.body = self.compile_region(region, terminators=("func.return",))

    def compile_region(self, region, terminators=("stablehlo.return", "func.return", "sdy.return")) -> Region:
        blocks = list(region.blocks)
        if len(blocks) != 1:
            raise error_at(region.owner, "regions with more than one block are not supported", self.filename)
        block = blocks[0]
        arg_slots = [self.slot(a) for a in block.arguments]
        ops = list(block.operations)
        steps, result_slots = [], []
        last_use = self._aliases.analyze(block, ops)
        for i, op in enumerate(ops):
            name = op.operation.name
            if name in terminators:
                result_slots = [self.slot(v) for v in op.operands]
                continue
            steps.extend(self.lower(op, i, last_use))
        return Region(arg_slots, steps, result_slots)

    def lower(self, op, index: int, last_use) -> list[Step]:
        from sdylog.mpmd.hints import is_host_callback
        from sdylog.simulate.registry import lowering_for
        op = op.operation
        if is_host_callback(op):
            return self.host_callback(op)
        build = lowering_for(op)
        if build is None:
            raise error_at(op, f"the simulator cannot execute '{op.name}'", self.filename)
        ctx = OpContext(self, op, index, last_use)
        try:
            out = build(ctx)
        except (SdylogError, ExecutionError):
            raise
        except UnsupportedType as e:
            raise error_at(op, f"'{op.name}': {e}", self.filename) from None
        steps = [self._located(op, s) for s in (out if isinstance(out, list) else [out])]
        if self.program.tracer is not None:
            record = self.program.tracer.recorder(op, [self.slot(r) for r in op.results])
            if record is not None:
                steps.append(record)
        return steps

    def host_callback(self, op) -> list[Step]:
        """No step for a host callback without results (Program.skipped
        lists it); an error for one with results, whose values only its
        Python function could tell."""
        from sdylog.simulate.trace import user_where
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if len(op.results):
            raise error_at(op, f"the simulator cannot execute custom_call @{target}: a host callback with results "
                           "(jax.pure_callback, io_callback) runs a Python function that the module does not hold",
                           self.filename)
        with self.program._lock:
            self.program.skipped.append(SkippedOp(user_where(op, self.filename), target))
        return []

    def _located(self, op, step: Step) -> Step:
        """Errors numpy raises at run time become located ExecutionErrors."""
        name = op.name
        where = op.location
        filename = self.filename

        def run(env, rt):
            try:
                step(env, rt)
            except (SdylogError, KeyboardInterrupt, Aborted):
                raise
            except Exception as e:  # numpy errors, bad shapes from bad inputs
                err = error_at(where, f"'{name}' failed: {type(e).__name__}: {e}", filename)
                raise ExecutionError(err.message, err.location) from e
        return run


class AliasInfo:
    """Which op results own fresh buffers that die at a given op.

    An elementwise op may write its result into an operand's buffer when that
    buffer is fresh (made by an op that allocates), no view of it is used
    later, and it never escapes (returned, captured by a region op...). This
    saves the allocations that dominate large element-wise chains.
    """

    def analyze(self, block, ops) -> dict:
        from sdylog.simulate.registry import alias_kind
        pos = {}
        base: dict = {}
        for i, op in enumerate(ops):
            for r in op.results:
                pos[r] = i
        # base buffer of each value: fresh results are their own base; views
        # share their operand's; anything else is not reusable (None).
        for i, op in enumerate(ops):
            kind = alias_kind(op.operation)
            for r in op.results:
                if kind == "fresh":
                    base[r] = r
                elif kind == "view" and len(op.operands) > 0:
                    base[r] = base.get(op.operands[0])
                else:
                    base[r] = None
        last = {}
        escaped = set()
        for i, op in enumerate(ops):
            kind = alias_kind(op.operation)
            used = list(op.operands) + _captured_values(op)
            for v in used:
                b = base.get(v)
                if b is None:
                    continue
                last[b] = i
                if kind not in ("fresh", "view"):
                    escaped.add(b)  # may be returned, stored or aliased by this op
        for b in escaped:
            last[b] = len(ops) + 1
        return {"base": base, "last": last}


def _captured_values(op) -> list:
    """Values from outside used inside an op's regions."""
    if not op.operation.regions:
        return []
    inner_defined = set()
    used = []
    stack = [op.operation]
    while stack:
        cur = stack.pop()
        for region in cur.regions:
            for block in region.blocks:
                for a in block.arguments:
                    inner_defined.add(a)
                for inner in block.operations:
                    for r in inner.results:
                        inner_defined.add(r)
                    used.extend(inner.operands)
                    stack.append(inner.operation)
    return [v for v in used if v not in inner_defined]


class OpContext:
    """What a lowering sees: the op, slot lookups, attribute helpers, region compiler."""

    def __init__(self, compiler: FunctionCompiler, op, index: int, last_use):
        self.compiler = compiler
        self.op = op
        self.index = index
        self._last_use = last_use
        self.program = compiler.program
        self.filename = compiler.filename

    # values
    @property
    def operands(self):
        return list(self.op.operands)

    @property
    def results(self):
        return list(self.op.results)

    def ins(self) -> list[int]:
        return [self.compiler.slot(v) for v in self.op.operands]

    def outs(self) -> list[int]:
        return [self.compiler.slot(v) for v in self.op.results]

    def in_slot(self, i: int = 0) -> int:
        return self.compiler.slot(self.op.operands[i])

    def out_slot(self, i: int = 0) -> int:
        return self.compiler.slot(self.op.results[i])

    def dtype(self, value) -> np.dtype:
        return tensor_dtype(value.type)

    def shape(self, value) -> tuple[int, ...]:
        return tensor_shape(value.type)

    @property
    def result_dtype(self) -> np.dtype:
        return tensor_dtype(self.op.results[0].type)

    @property
    def result_shape(self) -> tuple[int, ...]:
        return tensor_shape(self.op.results[0].type)

    def can_overwrite(self, i: int) -> bool:
        """Operand i's buffer is fresh and dies here: the result may be written into it."""
        v = self.op.operands[i]
        b = self._last_use["base"].get(v)
        if b is None:
            return False
        # Other operands viewing the same buffer are read by this same op:
        # numpy's ufuncs handle the overlap.
        return self._last_use["last"].get(b) == self.index

    # attributes
    def attr(self, name: str):
        return self.op.attributes[name] if name in self.op.attributes else None

    def int_attr(self, name: str, default=None):
        a = self.attr(name)
        return default if a is None else ir.IntegerAttr(a).value

    def ints(self, name: str, default=None) -> list[int] | None:
        """An integer list attribute: dense array, dense elements or array of ints."""
        a = self.attr(name)
        if a is None:
            return default
        return int_list(a)

    def bool_attr(self, name: str, default: bool = False) -> bool:
        a = self.attr(name)
        if a is None:
            return default
        if isinstance(a, ir.BoolAttr):
            return ir.BoolAttr(a).value
        return True  # unit attribute

    def region(self, i: int = 0) -> Region:
        return self.compiler.compile_region(self.op.regions[i])

    def error(self, message: str) -> SdylogError:
        return error_at(self.op, message, self.filename)

    def fail_at_run(self, message: str) -> ExecutionError:
        err = error_at(self.op, message, self.filename)
        return ExecutionError(err.message, err.location)


def int_list(a) -> list[int]:
    if isinstance(a, ir.DenseI64ArrayAttr):
        return list(ir.DenseI64ArrayAttr(a))
    if isinstance(a, ir.DenseI32ArrayAttr):
        return list(ir.DenseI32ArrayAttr(a))
    if isinstance(a, ir.DenseBoolArrayAttr):
        return [int(x) for x in ir.DenseBoolArrayAttr(a)]
    if isinstance(a, ir.DenseIntElementsAttr):
        return [int(x) for x in np.array(ir.DenseIntElementsAttr(a)).reshape(-1)]
    if isinstance(a, ir.ArrayAttr):
        return [ir.IntegerAttr(x).value for x in ir.ArrayAttr(a)]
    if isinstance(a, ir.IntegerAttr):
        return [ir.IntegerAttr(a).value]
    raise TypeError(f"not an integer list: {a}")


def bool_list(a) -> list[bool]:
    if isinstance(a, ir.DenseBoolArrayAttr):
        return [bool(x) for x in ir.DenseBoolArrayAttr(a)]
    if isinstance(a, ir.DenseIntElementsAttr) or isinstance(a, ir.DenseElementsAttr):
        return [bool(x) for x in np.array(a).reshape(-1)]
    return [bool(x) for x in int_list(a)]
