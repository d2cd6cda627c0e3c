"""-sdy-inline-meshes: replace every mesh reference in a sharding by the mesh
itself and erase the `sdy.mesh` symbols, so shardings stand alone.

A `replica_groups` mesh-axes attribute that names a mesh gets the mesh as a
`#stablehlo.mesh` (as newer Shardy does; the one in jaxlib leaves a dangling
reference there)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from sdylog.ir.diagnostics import error_at
from sdylog.ir.shardings import (REPLICA_GROUP_OPS, Meshes, erase_module_meshes, replica_groups_on_mesh,
                                 transform_shardings)
from sdylog.passes.census import Invalidated, census


def stablehlo_mesh(mesh_attr) -> ir.Attribute:
    """The `#stablehlo.mesh` equal to an `#sdy.mesh`."""
    m = sdy.MeshAttr(mesh_attr)
    axes = ir.ArrayAttr.get([stablehlo.MeshAxisAttr.get(a.name, a.size) for a in map(sdy.MeshAxisAttr, m.axes)])
    ids = list(m.device_ids)
    device_ids = ir.DenseIntElementsAttr.get(np.asarray(ids, dtype=np.int64)) if ids else None
    return stablehlo.MeshAttr.get(axes, device_ids)


@lru_cache(maxsize=4096)
def on_mesh(sharding, mesh) -> ir.Attribute:
    """The sharding with the mesh attribute `mesh` in place of its mesh
    (kept: attributes are uniqued, and modules, and the runs of a process,
    repeat the same few shardings)."""
    s = sdy.TensorShardingAttr(sharding)
    return sdy.TensorShardingAttr.get(mesh, list(s.dimension_shardings),
                                      list(s.replicated_axes), list(s.unreduced_axes))


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    with module.context:
        meshes = Meshes(module)

        def inline(sharding, _value):
            s = sdy.TensorShardingAttr(sharding)
            ref = s.mesh_or_ref
            if not isinstance(ref, ir.FlatSymbolRefAttr):
                return sharding
            mesh = meshes.attrs.get(ref.value)
            if mesh is None:
                raise error_at(module.operation, f"unknown mesh: @{ref.value}", ctx.filename)
            return on_mesh(sharding, mesh)
        # (each sharding is inlined on its own: the order ops come in does not matter)
        transform_shardings(module.operation, inline, of_sharding_only=True, by_name=found.by_names())
        for op in found.ops_of(REPLICA_GROUP_OPS):
            groups = replica_groups_on_mesh(op)
            if groups is None:
                continue
            ref = groups.mesh
            if isinstance(ref, ir.FlatSymbolRefAttr) and ref.value in meshes.attrs:
                op.attributes["replica_groups"] = stablehlo.ReplicaGroupMeshAxesAttr.get(
                    stablehlo_mesh(meshes.attrs[ref.value]), groups.axes)
        erased = erase_module_meshes(module, found.ops("sdy.mesh"))
    return Invalidated(frozenset({"sdy.mesh"}) if erased else frozenset())
