"""Sharded StableHLO programs for property tests, as MLIR text verified by
jaxlib's parser.

    from generators.stablehlo_programs import ProgramConfig, programs, random_program

    @given(programs(ProgramConfig(ops=20)))        # a hypothesis strategy (shrinks)
    def test_something(program): ... program.text ...

    program = random_program(seed=7, config=ProgramConfig(ops=300))   # bulk runs

A program is a module with one or two meshes (axes of sizes 2, 4, 8), a public
@main and private functions it calls, and a mix of ops: elementwise, transpose,
reshape, concatenate, slice, broadcast_in_dim, dot_general, reduce, while
loops whose bodies call functions, calls, sharding constraints, sharding
groups and optimization barriers. Shardings (on arguments, results, ops and
constraints) use whole axes and sub-axes, open and closed dimensions,
replicated axes and user priorities. Values nobody uses are left in (dead
code); the rest are returned.

How it is built, for later work to extend (partitioning, MPMD placement):
- `Draw` is where every choice comes from: `HypothesisDraw` (hypothesis's
  `draw`, so failures shrink) or `RandomDraw` (random.Random, for long runs).
- `ModuleBuilder` holds the meshes and functions; `FunctionBuilder` one
  function's (or one region's) values with their shapes and its text lines.
- `OP_KINDS` maps a name to an emitter `(fb, draw) -> None` that adds one op,
  or a small group of ops, reading values already defined. A config's
  `weights` choose among them; new ops are new entries in the table.
- `random_sharding` makes a sharding for a shape on one of the module's meshes.
`build_program` returns a `Program` (the text and what it was built from);
it raises GeneratorError when jaxlib does not accept the text (a bug here).
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Callable, Protocol

AXIS_NAMES = ("x", "y", "z", "w")
AXIS_SIZES = (2, 4, 8)
DIM_SIZES = (2, 4, 8, 16, 4, 8, 6, 12)   # mostly powers of two; 6 and 12 need padding or sub-axes
UNARY = ("negate", "abs", "exponential", "tanh", "cosine", "sqrt")
BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "divide")


class GeneratorError(Exception):
    """The generator built a module jaxlib does not accept."""


# ---------------------------------------------------------------- choices
class Draw(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...      # lo <= n <= hi
    def boolean(self, p: float) -> bool: ...             # True with probability p


class RandomDraw:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self, p: float) -> bool:
        return self.rng.random() < p


class HypothesisDraw:
    """Choices drawn through hypothesis (shrinks toward the small integer,
    toward False)."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self._draw = draw
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        return self._draw(self._st.integers(lo, hi))

    def boolean(self, p: float) -> bool:
        # (an integer below a threshold: shrinks to True for p >= 0.5 ... so
        # draw the complement's test, which shrinks to the rarer outcome False)
        return self._draw(self._st.integers(0, 999)) >= round(1000 * (1 - p))


def choice(draw: Draw, items):
    items = list(items)
    return items[draw.integer(0, len(items) - 1)]


# ---------------------------------------------------------------- configuration
DEFAULT_WEIGHTS = {
    "unary": 6, "binary": 8, "transpose": 3, "reshape": 3, "concatenate": 2, "slice": 1,
    "broadcast_in_dim": 2, "dot_general": 4, "reduce": 2, "constraint": 2, "while": 1, "call": 1,
    "group": 0.3, "optimization_barrier": 0.3, "argument": 1.5,
}


@dataclass(frozen=True)
class ProgramConfig:
    ops: int = 20                    # emitter calls in @main (each adds one op or a small group)
    weights: tuple = tuple(sorted(DEFAULT_WEIGHTS.items()))   # (op kind, weight) pairs
    max_meshes: int = 2
    arguments: int = 3               # @main's arguments to start with
    p_sharded_argument: float = 0.6
    p_op_sharding: float = 0.1       # an op result carries a sharding in the input
    p_result_sharding: float = 0.3   # a @main result carries one
    p_dead: float = 0.2              # an unused value stays unused (dead code) instead of being returned
    sub_axes: bool = True
    priorities: bool = True
    replicated: bool = True
    callee_ops: int = 4              # ops of a called function's body
    call_depth: int = 2              # calls nested in called functions

    def with_weights(self, **changes) -> "ProgramConfig":
        w = dict(self.weights)
        w.update(changes)
        return ProgramConfig(**{**self.__dict__, "weights": tuple(sorted(w.items()))})


@dataclass(frozen=True)
class Mesh:
    name: str
    axes: tuple[tuple[str, int], ...]

    def text(self) -> str:
        axes = ", ".join(f'"{a}"={n}' for a, n in self.axes)
        return f"sdy.mesh @{self.name} = <[{axes}]>"


@dataclass(frozen=True)
class Program:
    text: str
    config: ProgramConfig
    meshes: tuple[Mesh, ...]
    functions: tuple[str, ...]
    op_count: int                    # ops in the module (func.return and region terminators excluded)


# ---------------------------------------------------------------- shapes and types
def tensor_type(shape: tuple[int, ...], elem: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{elem}>"


def random_shape(draw: Draw, rank: int | None = None) -> tuple[int, ...]:
    rank = draw.integer(1, 3) if rank is None else rank
    return tuple(choice(draw, DIM_SIZES) for _ in range(rank))


def divisors(n: int) -> list[int]:
    return [d for d in range(2, n) if n % d == 0]


# ---------------------------------------------------------------- shardings
def random_sharding(draw: Draw, mesh: Mesh, shape: tuple[int, ...], config: ProgramConfig,
                    inline: bool = False) -> str:
    """A sharding of `shape` on `mesh`: each dimension gets up to two axes
    (or sub-axes) no other dimension uses, open or closed, maybe a priority;
    maybe replicated axes. `inline`: the `<@mesh, [...]>` form (constraints,
    per-value lists), else `#sdy.sharding<...>`."""
    free = list(mesh.axes)
    dims = []
    for _ in shape:
        refs = []
        for _ in range(draw.integer(0, 2)):
            if not free or not draw.boolean(0.6):
                break
            name, size = free.pop(draw.integer(0, len(free) - 1))
            refs.append(axis_ref(draw, name, size, config))
        open_ = draw.boolean(0.5)
        text = "{" + ", ".join(refs + (["?"] if open_ else [])) + "}"
        if config.priorities and (refs or open_) and draw.boolean(0.15):   # (none on an empty closed dimension)
            text += f"p{draw.integer(0, 2)}"
        dims.append(text)
    tail = ""
    if config.replicated and free and draw.boolean(0.1):
        order = [a for a, _ in mesh.axes]
        rep = sorted({free[draw.integer(0, len(free) - 1)][0]}, key=order.index)
        tail = ", replicated={" + ", ".join(f'"{a}"' for a in rep) + "}"
    body = f"@{mesh.name}, [{', '.join(dims)}]{tail}"
    return f"<{body}>" if inline else f"#sdy.sharding<{body}>"


def axis_ref(draw: Draw, name: str, size: int, config: ProgramConfig) -> str:
    """The whole axis, or (sub_axes) one of its sub-axes "name":(pre)size."""
    if config.sub_axes and size >= 4 and draw.boolean(0.25):
        sub = choice(draw, divisors(size))
        pre = choice(draw, [p for p in range(1, size) if size % (p * sub) == 0])
        return f'"{name}":({pre}){sub}'
    return f'"{name}"'


# ---------------------------------------------------------------- builders
@dataclass
class Value:
    name: str
    shape: tuple[int, ...]


@dataclass
class ModuleBuilder:
    draw: Draw
    config: ProgramConfig
    meshes: list[Mesh] = field(default_factory=list)
    functions: list["FunctionBuilder"] = field(default_factory=list)
    groups: int = 0

    def mesh(self) -> Mesh:
        """The mesh a new sharding goes on (mostly the first)."""
        if len(self.meshes) > 1 and self.draw.boolean(0.2):
            return self.meshes[self.draw.integer(1, len(self.meshes) - 1)]
        return self.meshes[0]

    def sharding(self, shape, inline: bool = False) -> str:
        return random_sharding(self.draw, self.mesh(), shape, self.config, inline)

    def new_function(self, arg_shapes: list[tuple[int, ...]], depth: int) -> "FunctionBuilder":
        fb = FunctionBuilder(self, f"f{len(self.functions)}", depth=depth)
        self.functions.append(fb)
        for shape in arg_shapes:
            attr = self.sharding(shape) if self.draw.boolean(0.15) else None
            fb.add_argument(shape, attr)
        return fb

    def text(self) -> str:
        return "\n".join([m.text() for m in self.meshes] + [f.text() for f in self.functions]) + "\n"


class FunctionBuilder:
    """A function (or a region of one: `region()` shares the namespace):
    arguments, text lines, and the values ops may read."""

    def __init__(self, module: ModuleBuilder, name: str, depth: int = 0, parent: "FunctionBuilder" = None):
        self.module = module
        self.name = name
        self.depth = depth               # call and loop nesting (main: 0)
        self.parent = parent
        self.args: list[tuple[Value, str | None]] = []
        self.lines: list[str] = []
        self.values: list[Value] = []
        self.uses: dict[str, int] = {}
        self.results: list[tuple[Value, str | None]] = []
        self.counter = parent.counter if parent else [0]
        self.ops = 0
        self.pure_ops: list[tuple[int, list[str], list[str]]] = []   # (line index, results, operands)

    @property
    def draw(self) -> Draw:
        return self.module.draw

    def fresh(self, prefix: str = "v") -> str:
        self.counter[0] += 1
        return f"%{prefix}{self.counter[0]}"

    def region(self) -> "FunctionBuilder":
        """A region of this function's (a loop body): nesting counts as a call level."""
        return FunctionBuilder(self.module, self.name, self.depth + 1, parent=self)

    def add_argument(self, shape, sharding: str | None = None) -> Value:
        v = Value(self.fresh("arg"), shape)
        self.args.append((v, sharding))
        self.values.append(v)
        return v

    def emit(self, rhs: str, shapes: list[tuple[int, ...]], reads: list[Value], sharded: bool = True,
             prefix: str = "v", pure: bool = True) -> list[Value]:
        """Add `%r = rhs` (rhs ends with the op's type) with results of
        `shapes`, maybe with an input sharding on one result; returns them.
        `pure`: the op may be erased as dead code (see `finish`)."""
        name = self.fresh(prefix)
        for v in reads:
            self.uses[v.name] = self.uses.get(v.name, 0) + 1
        results = [Value(name if len(shapes) == 1 else f"{name}#{i}", s) for i, s in enumerate(shapes)]
        if sharded and shapes and self.draw.boolean(self.module.config.p_op_sharding):
            per = [self.module.sharding(s, inline=True) if i == 0 else
                   f"<@{self.module.meshes[0].name}, [{', '.join('{?}' for _ in s)}]>"
                   for i, s in enumerate(shapes)]
            attr = " {sdy.sharding = #sdy.sharding_per_value<[" + ", ".join(per) + "]>}"
            head, sep, tail = rhs.rpartition(" : ")
            rhs = f"{head}{attr}{sep}{tail}"
        lhs = name if len(shapes) == 1 else f"{name}:{len(shapes)}"
        if pure:
            self.pure_ops.append((len(self.lines), [v.name for v in results], [v.name for v in reads]))
        self.lines.append(f"{lhs} = {rhs}" if shapes else rhs)
        self.values.extend(v for v in results if v.shape)   # (scalars: loop counters, reduce inits)
        self.ops += 1
        return results

    def constant(self, shape, value: str = "1.000000e+00", elem: str = "f32") -> Value:
        (v,) = self.emit(f"stablehlo.constant dense<{value}> : {tensor_type(shape, elem)}", [shape], [],
                         sharded=False, prefix="c")
        return v

    def pick(self, want: Callable[[Value], bool] = lambda v: True) -> Value | None:
        """A value `want` accepts, most often a recent one (shrinks to the latest)."""
        cands = [v for v in self.values if want(v)]
        if not cands:
            return None
        if self.draw.boolean(0.7):
            return cands[len(cands) - 1 - self.draw.integer(0, min(3, len(cands) - 1))]
        return cands[self.draw.integer(0, len(cands) - 1)]

    def operand_like(self, shape) -> Value:
        """A value of `shape`: an existing one, a new @main argument, or a constant."""
        v = self.pick(lambda w: w.shape == shape)
        if v is not None and self.draw.boolean(0.7):
            return v
        if self.parent is None and self.depth == 0 and self.draw.boolean(0.5):
            sharding = self.module.sharding(shape) if self.draw.boolean(0.5) else None
            return self.add_argument(shape, sharding)
        return self.constant(shape)

    def generate(self, n: int) -> None:
        weights = [(k, w) for k, w in self.module.config.weights if w > 0 and self._allowed(k)] or [("unary", 1)]
        total = sum(w for _, w in weights)
        for _ in range(n):
            if not self.values:
                self.add_argument(random_shape(self.draw)) if self.parent is None and self.depth == 0 \
                    else self.constant(random_shape(self.draw))
            x = self.draw.integer(0, 999) * total / 1000
            for kind, w in weights:
                x -= w
                if x < 0:
                    break
            OP_KINDS[kind](self, self.draw)

    def _allowed(self, kind: str) -> bool:
        if kind == "argument":
            return self.parent is None and self.depth == 0
        if kind in ("while", "call"):
            return self.depth < self.module.config.call_depth
        if kind == "group":
            return self.parent is None   # (a group spanning regions is still valid; kept simple)
        return True

    def finish(self, returned: list[Value]) -> None:
        """The function (or region) returns `returned`: the user priorities
        go from the shardings of pure ops nothing live reads (dead code:
        jaxlib's Shardy erases them in the first propagation run and then
        crashes when a later priority round writes their sharding)."""
        live = {v.name for v in returned}
        pure = {i for i, _, _ in self.pure_ops}
        for i, line in enumerate(self.lines):   # what impure ops and terminators read stays live
            if i not in pure:
                live.update(re.findall(r"%[A-Za-z0-9_]+(?:#\d+)?", line))
        for i, results, reads in reversed(self.pure_ops):
            if any(r in live or r.split("#")[0] in live for r in results):
                live.update(reads)
            elif "sdy.sharding" in self.lines[i]:
                self.lines[i] = re.sub(r"\}p\d", "}", self.lines[i])

    def unused(self) -> list[Value]:
        return [v for v in self.values if self.uses.get(v.name, 0) == 0 and
                v not in [a for a, _ in self.args]]

    def text(self) -> str:
        args = ", ".join(f"{v.name}: {tensor_type(v.shape)}" + (f" {{sdy.sharding = {s}}}" if s else "")
                         for v, s in self.args)
        res = ", ".join(tensor_type(v.shape) + (f" {{sdy.sharding = {s}}}" if s else "") for v, s in self.results)
        vis = "" if self.name == "main" else "private "
        ret = ", ".join(v.name for v, _ in self.results)
        ret_types = ", ".join(tensor_type(v.shape) for v, _ in self.results)
        body = "\n".join("  " + line for line in self.lines)
        ret_line = f"  return {ret} : {ret_types}" if self.results else "  return"
        return f"func.func {vis}@{self.name}({args}) -> ({res}) {{\n{body}\n{ret_line}\n}}"


# ---------------------------------------------------------------- op emitters
def emit_unary(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    op = choice(draw, UNARY)
    fb.emit(f"stablehlo.{op} {x.name} : {tensor_type(x.shape)}", [x.shape], [x])


def emit_binary(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    y = x if draw.boolean(0.1) else fb.operand_like(x.shape)
    a, b = (x, y) if draw.boolean(0.5) else (y, x)
    op = choice(draw, BINARY)
    fb.emit(f"stablehlo.{op} {a.name}, {b.name} : {tensor_type(x.shape)}", [x.shape], [a, b])


def emit_transpose(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick(lambda v: len(v.shape) >= 2)
    if x is None:
        return emit_unary(fb, draw)
    perm = list(range(len(x.shape)))
    for i in range(len(perm) - 1, 0, -1):   # a shuffle from the draws
        j = draw.integer(0, i)
        perm[i], perm[j] = perm[j], perm[i]
    if perm == sorted(perm):
        perm[0], perm[1] = perm[1], perm[0]
    shape = tuple(x.shape[p] for p in perm)
    fb.emit(f"stablehlo.transpose {x.name}, dims = [{', '.join(map(str, perm))}] : "
            f"({tensor_type(x.shape)}) -> {tensor_type(shape)}", [shape], [x])


def emit_reshape(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    shape = list(x.shape)
    kind = draw.integer(0, 2)
    if kind == 0 and len(shape) >= 2:                          # merge two adjacent dimensions
        i = draw.integer(0, len(shape) - 2)
        shape[i:i + 2] = [shape[i] * shape[i + 1]]
    elif kind == 1 and len(shape) <= 2 and divisors(shape[0] if len(shape) == 1 else max(shape)):
        i = draw.integer(0, len(shape) - 1)                   # split one dimension in two
        ds = divisors(shape[i])
        if not ds:
            return emit_unary(fb, draw)
        a = choice(draw, ds)
        shape[i:i + 1] = [a, shape[i] // a]
    else:                                                      # flatten
        shape = [math.prod(shape)]
    shape = tuple(shape)
    if shape == x.shape:
        return emit_unary(fb, draw)
    fb.emit(f"stablehlo.reshape {x.name} : ({tensor_type(x.shape)}) -> {tensor_type(shape)}", [shape], [x])


def emit_concatenate(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    dim = draw.integer(0, len(x.shape) - 1)
    parts = [x] + [x if draw.boolean(0.3) else fb.operand_like(x.shape) for _ in range(draw.integer(1, 2))]
    shape = tuple(n * len(parts) if d == dim else n for d, n in enumerate(x.shape))
    names = ", ".join(v.name for v in parts)
    types = ", ".join(tensor_type(v.shape) for v in parts)
    fb.emit(f"stablehlo.concatenate {names}, dim = {dim} : ({types}) -> {tensor_type(shape)}", [shape], parts)


def emit_slice(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick(lambda v: any(n % 2 == 0 for n in v.shape))
    if x is None:
        return emit_unary(fb, draw)
    dim = choice(draw, [d for d, n in enumerate(x.shape) if n % 2 == 0])
    start = draw.integer(0, 1) * x.shape[dim] // 2
    ranges = ", ".join(f"{start}:{start + n // 2}" if d == dim else f"0:{n}" for d, n in enumerate(x.shape))
    shape = tuple(n // 2 if d == dim else n for d, n in enumerate(x.shape))
    fb.emit(f"stablehlo.slice {x.name} [{ranges}] : ({tensor_type(x.shape)}) -> {tensor_type(shape)}",
            [shape], [x])


def emit_broadcast_in_dim(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick(lambda v: len(v.shape) <= 2)
    if x is None:
        return emit_unary(fb, draw)
    at = draw.integer(0, len(x.shape))
    shape = x.shape[:at] + (choice(draw, DIM_SIZES[:4]),) + x.shape[at:]
    dims = [d if d < at else d + 1 for d in range(len(x.shape))]
    fb.emit(f"stablehlo.broadcast_in_dim {x.name}, dims = [{', '.join(map(str, dims))}] : "
            f"({tensor_type(x.shape)}) -> {tensor_type(shape)}", [shape], [x])


def emit_dot_general(fb: FunctionBuilder, draw: Draw) -> None:
    """A matmul ([M,K] x [K,N]), a batched one ([B,M,K] x [B,K,N]), or a
    contraction of the leading dimensions ([K,M] x [K,N])."""
    x = fb.pick(lambda v: len(v.shape) in (2, 3))
    if x is None:
        return emit_unary(fb, draw)
    n = choice(draw, DIM_SIZES[:4])
    if len(x.shape) == 3:
        b, m, k = x.shape
        y = fb.operand_like((b, k, n))
        dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]"
        shape = (b, m, n)
    elif draw.boolean(0.75):
        m, k = x.shape
        y = fb.operand_like((k, n))
        dims = "contracting_dims = [1] x [0]"
        shape = (m, n)
    else:
        k, m = x.shape
        y = fb.operand_like((k, n))
        dims = "contracting_dims = [0] x [0]"
        shape = (m, n)
    fb.emit(f"stablehlo.dot_general {x.name}, {y.name}, {dims} : "
            f"({tensor_type(x.shape)}, {tensor_type(y.shape)}) -> {tensor_type(shape)}", [shape], [x, y])


def emit_reduce(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick(lambda v: len(v.shape) >= 2)
    if x is None:
        return emit_unary(fb, draw)
    dim = draw.integer(0, len(x.shape) - 1)
    shape = tuple(n for d, n in enumerate(x.shape) if d != dim)
    init = fb.constant((), "0.000000e+00")
    fb.emit(f"stablehlo.reduce({x.name} init: {init.name}) applies stablehlo.add across dimensions = [{dim}] : "
            f"({tensor_type(x.shape)}, tensor<f32>) -> {tensor_type(shape)}", [shape], [x, init])


def emit_constraint(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    s = fb.module.sharding(x.shape, inline=True)
    fb.emit(f"sdy.sharding_constraint {x.name} {s} : {tensor_type(x.shape)}", [x.shape], [x], sharded=False,
            pure=False)


def emit_group(fb: FunctionBuilder, draw: Draw) -> None:
    """Two values of one shape in a new sharding group."""
    x = fb.pick()
    y = fb.pick(lambda v: v.shape == x.shape and v is not x)
    if y is None:
        return emit_unary(fb, draw)
    gid = fb.module.groups
    fb.module.groups += 1
    for v in (x, y):
        fb.lines.append(f"sdy.sharding_group {v.name} group_id={gid} : {tensor_type(v.shape)}")
        fb.uses[v.name] = fb.uses.get(v.name, 0) + 1
        fb.ops += 1


def emit_optimization_barrier(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    fb.emit(f"stablehlo.optimization_barrier {x.name} : {tensor_type(x.shape)}", [x.shape], [x], sharded=False,
            pure=False)   # (its data-flow edges keep it)


def emit_argument(fb: FunctionBuilder, draw: Draw) -> None:
    shape = random_shape(draw)
    fb.add_argument(shape, fb.module.sharding(shape) if draw.boolean(fb.module.config.p_sharded_argument) else None)


def callee(fb: FunctionBuilder, args: list[Value], result_shapes: list[tuple[int, ...]] | None) -> FunctionBuilder:
    """A private function taking values of `args`' shapes; its results have
    `result_shapes`, or are some of its unused values."""
    draw = fb.draw
    f = fb.module.new_function([a.shape for a in args], fb.depth + 1)
    f.generate(draw.integer(1, fb.module.config.callee_ops))
    if result_shapes is None:
        pool = f.unused() or f.values
        picked = [pool[-1]] + ([pool[0]] if len(pool) > 1 and draw.boolean(0.3) else [])
    else:
        picked = [f.pick(lambda v, s=s: v.shape == s) or f.constant(s) for s in result_shapes]
    for v in picked:
        f.uses[v.name] = f.uses.get(v.name, 0) + 1
    f.results = [(v, None) for v in picked]
    f.finish(picked)
    return f


def call(fb: FunctionBuilder, f: FunctionBuilder, args: list[Value]) -> list[Value]:
    names = ", ".join(a.name for a in args)
    types = ", ".join(tensor_type(a.shape) for a in args)
    rtypes = ", ".join(tensor_type(v.shape) for v, _ in f.results)
    rtypes = rtypes if len(f.results) == 1 else f"({rtypes})"
    return fb.emit(f"func.call @{f.name}({names}) : ({types}) -> {rtypes}", [v.shape for v, _ in f.results], args,
                   prefix="call", pure=False)


def emit_call(fb: FunctionBuilder, draw: Draw) -> None:
    x = fb.pick()
    args = [x] + ([fb.pick()] if draw.boolean(0.3) else [])
    same = [f for f in fb.module.functions[1:] if [a.shape for a, _ in f.args] == [a.shape for a in args]
            and f.depth > fb.depth]
    f = same[draw.integer(0, len(same) - 1)] if same and draw.boolean(0.4) else callee(fb, args, None)
    call(fb, f, args)


def emit_while(fb: FunctionBuilder, draw: Draw) -> None:
    """A counted loop carrying one or two tensors; its body calls a function
    on one of them (and maybe computes more)."""
    carried = [fb.pick()]
    if draw.boolean(0.4):
        carried.append(fb.pick())
    zero = fb.constant((), "0", "i32")
    one = fb.constant((), "1", "i32")
    bound = fb.constant((), str(draw.integer(1, 4)), "i32")
    # (the header names the block arguments of both regions)
    counter = fb.fresh("i")
    args = [Value(fb.fresh("it"), v.shape) for v in carried]
    body = fb.region()
    body.values = list(args)
    target = args[draw.integer(0, len(args) - 1)]
    operands = [target] + ([args[0]] if len(args) > 1 and draw.boolean(0.3) else [])
    (out,) = call(body, callee(body, operands, [target.shape]), operands)
    body.generate(draw.integer(0, 2))
    nxt, pred = fb.fresh("i"), fb.fresh("p")
    body.lines.append(f"{nxt} = stablehlo.add {counter}, {one.name} : tensor<i32>")
    rets = [out if a is target else (body.pick(lambda w, s=a.shape: w.shape == s) or a) for a in args]
    body.finish(rets)
    body.lines.append(f"stablehlo.return {', '.join([nxt] + [v.name for v in rets])} : "
                      f"{', '.join(['tensor<i32>'] + [tensor_type(v.shape) for v in rets])}")
    inits = ", ".join([f"{counter} = {zero.name}"] + [f"{a.name} = {v.name}" for a, v in zip(args, carried)])
    types = ", ".join(["tensor<i32>"] + [tensor_type(v.shape) for v in carried])
    name = fb.fresh("w")
    cond = [f"{pred} = stablehlo.compare LT, {counter}, {bound.name}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>",
            f"stablehlo.return {pred} : tensor<i1>"]
    fb.lines.append(f"{name}:{len(args) + 1} = stablehlo.while({inits}) : {types}\n  cond {{\n    " +
                    "\n    ".join(cond) + "\n  } do {\n    " + "\n    ".join(body.lines) + "\n  }")
    fb.ops += body.ops + 3
    for v in carried:
        fb.uses[v.name] = fb.uses.get(v.name, 0) + 1
    fb.values.extend(Value(f"{name}#{k + 1}", v.shape) for k, v in enumerate(carried))


OP_KINDS: dict[str, Callable[[FunctionBuilder, Draw], None]] = {
    "unary": emit_unary, "binary": emit_binary, "transpose": emit_transpose, "reshape": emit_reshape,
    "concatenate": emit_concatenate, "slice": emit_slice, "broadcast_in_dim": emit_broadcast_in_dim,
    "dot_general": emit_dot_general, "reduce": emit_reduce, "constraint": emit_constraint,
    "while": emit_while, "call": emit_call, "group": emit_group,
    "optimization_barrier": emit_optimization_barrier, "argument": emit_argument,
}


# ---------------------------------------------------------------- whole programs
def random_meshes(draw: Draw, config: ProgramConfig) -> list[Mesh]:
    meshes = []
    for k in range(draw.integer(1, max(1, config.max_meshes)) if config.max_meshes > 1 else 1):
        n = draw.integer(1, 3)
        names = list(AXIS_NAMES)
        axes = []
        for _ in range(n):
            name = names.pop(draw.integer(0, len(names) - 1))
            axes.append((name, choice(draw, AXIS_SIZES if len(axes) < 2 else AXIS_SIZES[:1])))
        meshes.append(Mesh("mesh" if k == 0 else f"mesh_{k}", tuple(axes)))
    return meshes


def build_program(draw: Draw, config: ProgramConfig = ProgramConfig(), exact: bool = True) -> Program:
    """A program of `config`; `exact`: @main gets config.ops emitter calls,
    else between 1 and that many (hypothesis then shrinks toward fewer)."""
    mb = ModuleBuilder(draw, config)
    mb.meshes = random_meshes(draw, config)
    main = FunctionBuilder(mb, "main")
    mb.functions.append(main)
    for _ in range(max(1, config.arguments)):
        emit_argument(main, draw)
    main.generate(config.ops if exact else draw.integer(1, config.ops))
    returned = [v for v in main.unused() if not draw.boolean(config.p_dead)]
    if not returned:
        returned = [main.values[-1]]
    main.results = [(v, mb.sharding(v.shape) if draw.boolean(config.p_result_sharding) else None)
                    for v in returned]
    main.finish(returned)
    text = mb.text()
    check_text(text)
    return Program(text, config, tuple(mb.meshes), tuple(f.name for f in mb.functions),
                   sum(f.ops for f in mb.functions))


def check_text(text: str) -> None:
    """jaxlib parses and verifies `text` (else GeneratorError, with the text)."""
    from sdylog.ir import SdylogError, parse_module
    try:
        parse_module(text, "generated.mlir")
    except SdylogError as e:
        raise GeneratorError(f"{e}\n--- generated module:\n{text}") from e


def programs(config: ProgramConfig = ProgramConfig()):
    """A hypothesis strategy of Programs built with `config` (up to
    config.ops emitter calls in @main)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        return build_program(HypothesisDraw(draw), config, exact=False)

    return strategy()


def random_program(seed: int, config: ProgramConfig = ProgramConfig()) -> Program:
    """The program `seed` gives (the same on every run, without hypothesis)."""
    return build_program(RandomDraw(random.Random(seed)), config)
