"""Reading device placements in the input: maximal shardings (sdy, by mesh
symbol or inlined; mhlo.sharding strings) and sdylog.device attributes."""
from __future__ import annotations

import re

from jaxlib.mlir import ir

from sdylog.ir.shardings import Meshes, mesh_or_ref, per_value

DEVICE_ATTR = "sdylog.device"
_MAXIMAL = re.compile(r"maximal\s+device\s*=\s*(\d+)")
_NON_MAXIMAL = re.compile(r"devices\s*=|manual|last_tile")


def mhlo_devices(text: str) -> tuple[list[int], bool]:
    """The devices an `mhlo.sharding` string names with `{maximal device=N}`
    (tuple forms list one per element), and whether it shards over devices
    (SPMD) instead."""
    return [int(d) for d in _MAXIMAL.findall(text)], bool(_NON_MAXIMAL.search(text))


def sharding_device(meshes: Meshes, sharding) -> tuple[int | None, str | None]:
    """(device, None) for a sharding on a maximal mesh, (None, mesh name) for
    one on a mesh with axes, (None, None) otherwise (an empty mesh); raises
    KeyError for an unknown mesh symbol."""
    mesh = meshes.of(sharding)
    if mesh is None:
        raise KeyError("unknown mesh")
    if mesh.is_maximal:
        return mesh.device_ids[0], None
    if mesh.axes:
        ref = mesh_or_ref(sharding)
        return None, ref.value if isinstance(ref, ir.FlatSymbolRefAttr) else str(ref)
    return None, None


def op_devices(meshes: Meshes, op) -> set[int]:
    """The devices an op's own attributes place it on (sdy.sharding of its
    results, mhlo.sharding, sdylog.device)."""
    attrs = op.attributes
    out = set()
    if "sdy.sharding" in attrs:
        for s in per_value(attrs["sdy.sharding"]):
            d, _ = sharding_device(meshes, s)
            if d is not None:
                out.add(d)
    if "mhlo.sharding" in attrs:
        out.update(mhlo_devices(ir.StringAttr(attrs["mhlo.sharding"]).value)[0])
    if DEVICE_ATTR in attrs:
        out.add(ir.IntegerAttr(attrs[DEVICE_ATTR]).value)
    return out
