"""Hypothesis strategies: small StableHLO programs with random device
placements (for the MPMD partitioner's properties). A program is a chain of
element-wise ops over f32 and i32 vectors, with a while loop or a case at
random points whose body ops are placed at random too; each op, argument
and result is placed on a random device or left to the rules.

(Kept apart until the generator of sharded programs that tests/ will share
exists: then these placements extend it.)"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

N = 8
F = f"tensor<{N}xf32>"
I = f"tensor<{N}xi32>"
BINARY = {F: ("add", "multiply", "subtract", "maximum"), I: ("add", "multiply", "subtract", "maximum", "xor")}
UNARY = {F: ("negate", "abs", "floor"), I: ("negate", "abs", "not")}


@dataclass
class _Builder:
    draw: object
    devices: int
    lines: list
    n: int = 0

    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"%{prefix}{self.n}"

    def place(self, allow_none: bool = True) -> str:
        """An attribute placing an op on a random device, or nothing."""
        choices = list(range(self.devices)) + ([None] if allow_none else [])
        d = self.draw(st.sampled_from(choices))
        return "" if d is None else f" {{sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_{d}, []>]>}}"

    def op(self, pool: dict, indent: str) -> None:
        """One element-wise op reading values of `pool` (type -> names), its result added to it."""
        t = self.draw(st.sampled_from(sorted(t for t in pool if pool[t])))
        name = self.fresh()
        if self.draw(st.booleans()):
            a, b = self.draw(st.sampled_from(pool[t])), self.draw(st.sampled_from(pool[t]))
            kind = self.draw(st.sampled_from(BINARY[t]))
            self.lines.append(f"{indent}{name} = stablehlo.{kind} {a}, {b}{self.place()} : {t}")
        else:
            a = self.draw(st.sampled_from(pool[t]))
            kind = self.draw(st.sampled_from(UNARY[t]))
            self.lines.append(f"{indent}{name} = stablehlo.{kind} {a}{self.place()} : {t}")
        pool[t].append(name)

    def constant(self, pool: dict, indent: str) -> None:
        t = self.draw(st.sampled_from([F, I]))
        name = self.fresh("c")
        value = "1.5" if t == F else "3"
        self.lines.append(f"{indent}{name} = stablehlo.constant dense<{value}> : {t}")
        pool[t].append(name)

    def loop(self, pool: dict, indent: str) -> None:
        """A while over a counter and one carried vector, its ops placed at random."""
        t = self.draw(st.sampled_from(sorted(t for t in pool if pool[t])))
        init = self.draw(st.sampled_from(pool[t]))
        trips = self.draw(st.integers(0, 3))
        r, zero = self.fresh("w"), self.fresh("z")
        i, acc = self.fresh("i"), self.fresh("acc")
        self.lines.append(f"{indent}{zero} = stablehlo.constant dense<0> : tensor<i32>")
        self.lines.append(f"{indent}{r}:2 = stablehlo.while({i} = {zero}, {acc} = {init}) : tensor<i32>, {t}")
        lim, p = self.fresh("lim"), self.fresh("p")
        self.lines.append(f"{indent} cond {{")
        self.lines.append(f"{indent}  {lim} = stablehlo.constant dense<{trips}> : tensor<i32>")
        self.lines.append(f"{indent}  {p} = stablehlo.compare LT, {i}, {lim}{self.place()} "
                          f": (tensor<i32>, tensor<i32>) -> tensor<i1>")
        self.lines.append(f"{indent}  stablehlo.return {p} : tensor<i1>")
        self.lines.append(f"{indent}}} do {{")
        one, i2 = self.fresh("one"), self.fresh("i")
        self.lines.append(f"{indent}  {one} = stablehlo.constant dense<1> : tensor<i32>")
        self.lines.append(f"{indent}  {i2} = stablehlo.add {i}, {one}{self.place()} : tensor<i32>")
        inner = {k: list(v) for k, v in pool.items()}
        inner[t].append(acc)
        for _ in range(self.draw(st.integers(1, 3))):
            self.op(inner, indent + "  ")
        out = self.draw(st.sampled_from([x for x in inner[t] if x not in pool[t]] or [acc]))
        self.lines.append(f"{indent}  stablehlo.return {i2}, {out} : tensor<i32>, {t}")
        self.lines.append(f"{indent}}}")
        pool[t].append(f"{r}#1")

    def case(self, pool: dict, indent: str) -> None:
        """A case on a value computed from an i32 vector, two branches of random ops."""
        t = self.draw(st.sampled_from(sorted(t for t in pool if pool[t])))
        src = self.draw(st.sampled_from(pool[I])) if pool[I] else None
        sel = self.fresh("sel")
        if src is None:
            self.lines.append(f"{indent}{sel} = stablehlo.constant dense<1> : tensor<i32>")
        else:
            self.lines.append(f"{indent}{sel} = stablehlo.slice {src} [0:1]{self.place()} : ({I}) -> tensor<1xi32>")
            sel2 = self.fresh("sel")
            self.lines.append(f"{indent}{sel2} = stablehlo.reshape {sel}{self.place()} : (tensor<1xi32>) -> tensor<i32>")
            sel = sel2
        r = self.fresh("k")
        self.lines.append(f'{indent}{r} = "stablehlo.case"({sel}) ({{')
        for b in range(2):
            inner = {k: list(v) for k, v in pool.items()}
            for _ in range(self.draw(st.integers(0, 2))):
                self.op(inner, indent + "  ")
            out = self.draw(st.sampled_from(inner[t]))
            self.lines.append(f"{indent}  stablehlo.return {out} : {t}")
            self.lines.append(f"{indent}}}" + (", {" if b == 0 else f") : (tensor<i32>) -> {t}"))
        pool[t].append(r)


@st.composite
def placed_programs(draw, max_ops: int = 8, control_flow: bool = True):
    """(module text, devices): a program whose ops, arguments and results are placed at random."""
    devices = draw(st.integers(2, 3))
    b = _Builder(draw, devices, [])
    args = draw(st.lists(st.sampled_from([F, I]), min_size=1, max_size=3))
    pool = {F: [], I: []}
    params = []
    for k, t in enumerate(args):
        d = draw(st.sampled_from(list(range(devices)) + [None]))
        attr = "" if d is None else f" {{sdy.sharding = #sdy.sharding<@maximal_mesh_{d}, []>}}"
        params.append(f"%arg{k}: {t}{attr}")
        pool[t].append(f"%arg{k}")
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(["op", "op", "op", "constant"] + (["loop", "case"] if control_flow else [])))
        getattr(b, kind)(pool, "    ")
    values = [(v, t) for t in (F, I) for v in pool[t] if not v.startswith("%arg")] or [(pool[args[0]][0], args[0])]
    results = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
    res_types = []
    for _, t in results:
        d = draw(st.sampled_from(list(range(devices)) + [None]))
        res_types.append(t + ("" if d is None else f" {{sdy.sharding = #sdy.sharding<@maximal_mesh_{d}, []>}}"))
    meshes = "\n".join(f"  sdy.mesh @maximal_mesh_{d} = <[], device_ids=[{d}]>" for d in range(devices))
    body = "\n".join(b.lines)
    text = (f"module @g attributes {{mhlo.num_partitions = {devices} : i32}} {{\n{meshes}\n"
            f"  func.func @main({', '.join(params)}) -> ({', '.join(res_types)}) {{\n{body}\n"
            f"    return {', '.join(v for v, _ in results)} : {', '.join(t for _, t in results)}\n  }}\n}}\n")
    return text, devices
