"""Random reshards for differential tests: a mesh of 1-4 axes (sizes 2 to 8,
not all powers of two), a tensor of rank 1-3, and two random shardings of it
(full axes and sub-axes of each axis, in random dimensions and orders), the
target sometimes on the same axes in another device order."""
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


def _sharding(mesh: str, axes, rank: int, rng: random.Random) -> str:
    pieces = [p for name, size in axes for p in _pieces(name, size, rng)]
    rng.shuffle(pieces)
    dims = [[] for _ in range(rank)]
    for p in pieces:
        if rng.random() < 0.7:
            dims[rng.randrange(rank)].append(p)
    return f"<@{mesh}, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]>"


def reshard_case(rng: random.Random, divisible: bool = False) -> str:
    """A module whose @main reshards its argument; the argument and result
    carry the source and target shardings. `divisible`: smaller meshes, and
    every dimension divisible by the sizes of any axes (for the simulator:
    the per-device program has no padding)."""
    names = ["x", "y", "z", "w"][:rng.randint(1, 3 if divisible else 4)]
    axes = [(n, rng.choice([2, 2, 3, 4] if divisible else AXIS_SIZES)) for n in names]
    n = prod(s for _, s in axes)
    rank = rng.randint(1, 3)
    shape = [n if divisible else rng.choice(DIM_SIZES) for _ in range(rank)]
    ty = f"tensor<{'x'.join(map(str, shape))}xf32>"
    source = _sharding("mesh", axes, rank, rng)
    target = _sharding("mesh" if rng.random() < 0.85 else "mesh2", axes, rank, rng)
    ids = list(range(n))
    rng.shuffle(ids)
    if ids == sorted(ids):
        ids.reverse()   # (a mesh with iota's device ids would just be another name for @mesh)
    mesh_axes = ", ".join(f'"{name}"={size}' for name, size in axes)
    return f'''sdy.mesh @mesh = <[{mesh_axes}]>
sdy.mesh @mesh2 = <[{mesh_axes}], device_ids=[{", ".join(map(str, ids))}]>
func.func @main(%arg0: {ty} {{sdy.sharding = #sdy.sharding{source}}}) -> ({ty} {{sdy.sharding = #sdy.sharding{target}}}) {{
  %0 = sdy.reshard %arg0 {target} : {ty}
  return %0 : {ty}
}}
'''
