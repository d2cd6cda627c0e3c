"""Random reshards for differential tests: a mesh of 1-4 axes (sizes 2 to 8,
not all powers of two), a tensor of rank 1-3, and two random shardings of it
(full axes and sub-axes of each axis, in random dimensions and orders), the
target sometimes on the same axes in another device order; sometimes both
unreduced on an axis neither uses, the operand behind a propagation
barrier, or without a sharding."""
from __future__ import annotations

import random
from math import prod

AXIS_SIZES = [2, 2, 2, 3, 4, 4, 6, 8]
DIM_SIZES = [4, 6, 8, 12, 16, 24, 48]


def _pieces(name: str, size: int, rng: random.Random) -> list[str]:
    """The axis whole, or cut in two sub-axes (each kept with some chance)."""
    divisors = [d for d in range(2, size) if size % d == 0]
    if not divisors or rng.random() < 0.5:
        return [f'"{name}"']
    d = rng.choice(divisors)
    return [p for p in (f'"{name}":(1){d}', f'"{name}":({d}){size // d}') if rng.random() < 0.8]


def _dims(axes, rank: int, rng: random.Random) -> list[list[str]]:
    pieces = [p for name, size in axes for p in _pieces(name, size, rng)]
    rng.shuffle(pieces)
    dims = [[] for _ in range(rank)]
    for p in pieces:
        if rng.random() < 0.7:
            dims[rng.randrange(rank)].append(p)
    return dims


def _sharding(mesh: str, dims, unreduced: str) -> str:
    text = ", ".join("{" + ", ".join(d) + "}" for d in dims)
    return f"<@{mesh}, [{text}]" + (f", unreduced={{{unreduced}}}" if unreduced else "") + ">"


def reshard_case(rng: random.Random, divisible: bool = False) -> str:
    """A module whose @main reshards its argument; the argument and result
    carry the source and target shardings. `divisible`: smaller meshes,
    every dimension divisible by the sizes of any axes, no unreduced axes
    and no barrier (for the simulator: the per-device program has no
    padding, and a barrier without a sharding of its own is not one)."""
    names = ["x", "y", "z", "w"][:rng.randint(1, 3 if divisible else 4)]
    axes = [(n, rng.choice([2, 2, 3, 4] if divisible else AXIS_SIZES)) for n in names]
    n = prod(s for _, s in axes)
    rank = rng.randint(1, 3)
    shape = [n if divisible else rng.choice(DIM_SIZES) for _ in range(rank)]
    ty = f"tensor<{'x'.join(map(str, shape))}xf32>"
    source_dims, target_dims = _dims(axes, rank, rng), _dims(axes, rank, rng)
    used = {p.split(":")[0] for dims in (source_dims, target_dims) for d in dims for p in d}
    free = [f'"{name}"' for name, _ in axes if f'"{name}"' not in used]
    unreduced = rng.choice(free) if free and not divisible and rng.random() < 0.3 else ""
    source = _sharding("mesh", source_dims, unreduced)
    target = _sharding("mesh" if rng.random() < 0.85 else "mesh2", target_dims, unreduced)
    ids = list(range(n))
    rng.shuffle(ids)
    if ids == sorted(ids):
        ids.reverse()   # (a mesh with iota's device ids would just be another name for @mesh)
    mesh_axes = ", ".join(f'"{name}"={size}' for name, size in axes)
    arg = f" {{sdy.sharding = #sdy.sharding{source}}}" if unreduced or rng.random() < 0.9 else ""
    operand, barrier = "%arg0", ""
    if not divisible and rng.random() < 0.15:
        operand, barrier = "%b", f"  %b = sdy.propagation_barrier %arg0 allowed_direction=FORWARD : {ty}\n"
    return f'''sdy.mesh @mesh = <[{mesh_axes}]>
sdy.mesh @mesh2 = <[{mesh_axes}], device_ids=[{", ".join(map(str, ids))}]>
func.func @main(%arg0: {ty}{arg}) -> ({ty} {{sdy.sharding = #sdy.sharding{target}}}) {{
{barrier}  %0 = sdy.reshard {operand} {target} : {ty}
  return %0 : {ty}
}}
'''
