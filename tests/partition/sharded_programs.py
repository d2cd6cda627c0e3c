"""Hypothesis strategies: small sharded StableHLO programs as a JAX export
gives them (shardings on the arguments, some results and a few sharding
constraints; nothing else), for the partitioner's properties.

A program has a mesh of one to three axes (sizes 2, 3 or 4; at most 8
devices, so that simulating it stays quick) and a function whose ops
grow a pool of f32 values: element-wise ops, dots (each against a new
argument), reductions (sum and max), transposes, reshapes that split or
merge dimensions, broadcasts and sharding constraints. Dimension sizes
include ones the axes do not divide.

(Kept in a module of its own until the generator of sharded programs that
tests/ will share exists: then these strategies fold into it.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

AXES = ("x", "y", "z")
SIZES = (1, 2, 3, 4, 5, 6, 8, 12)


@dataclass
class Value:
    name: str
    shape: tuple[int, ...]

    @property
    def type(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + "f32>"


@st.composite
def meshes(draw) -> tuple[tuple[str, int], ...]:
    """One to three axes whose sizes multiply to at most 8."""
    n = draw(st.integers(1, 3))
    axes, total = [], 1
    for name in AXES[:n]:
        size = draw(st.sampled_from([s for s in (2, 3, 4) if total * s <= 8] or [2]))
        if total * size > 8:
            break
        axes.append((name, size))
        total *= size
    return tuple(axes)


@st.composite
def shardings(draw, rank: int, mesh) -> str:
    """A closed sharding over `rank` dimensions: each axis on at most one
    dimension (in a random order), or replicated."""
    names = [a for a, _ in mesh]
    used = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    dims: list[list[str]] = [[] for _ in range(rank)]
    if rank:
        for a in used:
            dims[draw(st.integers(0, rank - 1))].append(a)
    body = ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims)
    return f"#sdy.sharding<@mesh, [{body}]>"


@dataclass
class _Program:
    draw: object
    mesh: tuple
    args: list = field(default_factory=list)       # (Value, sharding or None)
    lines: list = field(default_factory=list)
    pool: list = field(default_factory=list)
    n: int = 0

    def fresh(self, shape) -> Value:
        self.n += 1
        return Value(f"%v{self.n}", tuple(shape))

    def arg(self, shape) -> Value:
        v = Value(f"%arg{len(self.args)}", tuple(shape))
        sharded = self.draw(st.booleans())
        self.args.append((v, self.draw(shardings(len(shape), self.mesh)) if sharded else None))
        self.pool.append(v)
        return v

    def pick(self, min_rank: int = 0) -> Value | None:
        choices = [v for v in self.pool if len(v.shape) >= min_rank]
        return self.draw(st.sampled_from(choices)) if choices else None

    def emit(self, shape, text: str) -> Value:
        """`text` with OUT standing for the result's type."""
        v = self.fresh(shape)
        self.lines.append(f"    {v.name} = {text.replace('OUT', v.type)}")
        self.pool.append(v)
        return v

    # --- ops -------------------------------------------------------------------------
    def elementwise(self) -> None:
        a = self.pick()
        same = [v for v in self.pool if v.shape == a.shape]
        if self.draw(st.booleans()):
            b = self.draw(st.sampled_from(same))
            kind = self.draw(st.sampled_from(["add", "multiply", "subtract", "maximum"]))
            self.emit(a.shape, f"stablehlo.{kind} {a.name}, {b.name} : OUT")
        else:
            kind = self.draw(st.sampled_from(["negate", "tanh", "abs", "exponential"]))
            self.emit(a.shape, f"stablehlo.{kind} {a.name} : OUT")

    def dot(self) -> None:
        a = self.pick(min_rank=1)
        if a is None:
            return
        n = self.draw(st.sampled_from(SIZES))
        b = self.arg((a.shape[-1], n))
        r = len(a.shape) - 1
        self.emit(a.shape[:-1] + (n,), f"stablehlo.dot_general {a.name}, {b.name}, contracting_dims = [{r}] x [0] "
                  f": ({a.type}, {b.type}) -> OUT")

    def reduce(self) -> None:
        a = self.pick(min_rank=1)
        if a is None:
            return
        d = self.draw(st.integers(0, len(a.shape) - 1))
        kind, init = self.draw(st.sampled_from([("add", "0.0"), ("maximum", "-1.0e+30")]))
        self.n += 1
        init_name = f"%init{self.n}"
        self.lines.append(f"    {init_name} = stablehlo.constant dense<{init}> : tensor<f32>")
        shape = a.shape[:d] + a.shape[d + 1:]
        self.emit(shape, f"stablehlo.reduce({a.name} init: {init_name}) applies stablehlo.{kind} across "
                  f"dimensions = [{d}] : ({a.type}, tensor<f32>) -> OUT")

    def transpose(self) -> None:
        a = self.pick(min_rank=2)
        if a is None:
            return
        perm = self.draw(st.permutations(range(len(a.shape))))
        self.emit(tuple(a.shape[p] for p in perm),
                  f"stablehlo.transpose {a.name}, dims = [{', '.join(map(str, perm))}] : ({a.type}) -> OUT")

    def reshape(self) -> None:
        a = self.pick(min_rank=1)
        if a is None:
            return
        shape = list(a.shape)
        d = self.draw(st.integers(0, len(shape) - 1))
        splits = [k for k in (2, 3, 4) if shape[d] % k == 0 and shape[d] > k]
        if len(shape) >= 2 and d + 1 < len(shape) and (not splits or self.draw(st.booleans())):
            shape[d:d + 2] = [shape[d] * shape[d + 1]]        # merge two dimensions
        elif splits:
            k = self.draw(st.sampled_from(splits))
            shape[d:d + 1] = [shape[d] // k, k]               # split one
        else:
            return
        self.emit(tuple(shape), f"stablehlo.reshape {a.name} : ({a.type}) -> OUT")

    def broadcast(self) -> None:
        a = self.pick()
        if len(a.shape) >= 3:
            return
        n = self.draw(st.sampled_from(SIZES))
        dims = ", ".join(str(i + 1) for i in range(len(a.shape)))
        self.emit((n,) + a.shape, f"stablehlo.broadcast_in_dim {a.name}, dims = [{dims}] : ({a.type}) -> OUT")

    def constraint(self) -> None:
        a = self.pick()
        sharding = self.draw(shardings(len(a.shape), self.mesh))
        self.emit(a.shape, f"sdy.sharding_constraint {a.name} {sharding[len('#sdy.sharding'):]} : OUT")

    OPS = ("elementwise", "dot", "reduce", "transpose", "reshape", "broadcast", "constraint")


@st.composite
def sharded_programs(draw, max_ops: int = 6) -> str:
    """The text of a module: a mesh and @main (see the module docstring)."""
    mesh = draw(meshes())
    p = _Program(draw, mesh)
    for _ in range(draw(st.integers(1, 2))):
        rank = draw(st.integers(1, 3))
        p.arg(tuple(draw(st.sampled_from(SIZES)) for _ in range(rank)))
    for _ in range(draw(st.integers(1, max_ops))):
        getattr(p, draw(st.sampled_from(_Program.OPS)))()
    results = [p.pool[-1]] + draw(st.lists(st.sampled_from(p.pool), max_size=1))
    result_types = []
    for v in results:
        s = draw(st.one_of(st.none(), shardings(len(v.shape), mesh)))
        result_types.append(v.type + (f" {{sdy.sharding = {s}}}" if s else ""))
    args = ", ".join(f"{v.name}: {v.type}" + (f" {{sdy.sharding = {s}}}" if s else "") for v, s in p.args)
    axes = ", ".join(f'"{a}"={n}' for a, n in mesh)
    return "\n".join([
        f"sdy.mesh @mesh = <[{axes}]>",
        f"func.func @main({args}) -> ({', '.join(result_types)}) {{",
        *p.lines,
        f"    return {', '.join(v.name for v in results)} : {', '.join(v.type for v in results)}",
        "}"])
