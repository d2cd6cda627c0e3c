"""-sdy-lift-inlined-meshes: every mesh becomes a `sdy.mesh` symbol, no two alike.

Identical `sdy.mesh` ops are merged into the first one. A mesh inlined in a
sharding (or in a `replica_groups` mesh-axes attribute of a stablehlo
collective) is replaced by a reference to an identical symbol, created after
the last mesh when missing, named `maximal_mesh_<id>` for a one-device mesh,
`empty_mesh` for an empty one and otherwise the first free name among
`mesh`, `mesh_0`, `mesh_1`, ... Finally every mesh symbol gets a
`stablehlo.mesh` attribute describing it in StableHLO's terms.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from sdylog.ir.rewrite import as_operation, create_op, ip_after_op
from sdylog.ir.shardings import (REPLICA_GROUP_OPS, mesh_or_ref, replica_groups_on_mesh, transform_shardings,
                                 walk_shardings)
from sdylog.ir.symbols import SymbolTable, symbol_name_of
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED, census


class _MeshLifter:
    def __init__(self, module: ir.Module):
        self.module = module
        self.symbols = SymbolTable(module)
        # mesh attribute, or reference to a merged-away mesh -> symbol name to use
        self.names: dict[ir.Attribute, str] = {}
        self.last_mesh = None
        self.changed = False
        self.ops_changed = False   # a mesh op was added or erased (not only attributes changed)

    def dedup_existing(self) -> None:
        for op in list(self.module.body.operations):
            op = as_operation(op)
            if op.name != "sdy.mesh":
                continue
            mesh = op.attributes["mesh"]
            name = symbol_name_of(op)
            if mesh in self.names:
                self.names[ir.FlatSymbolRefAttr.get(name)] = self.names[mesh]
                self.symbols.erase(op)
                self.changed = self.ops_changed = True
            else:
                self.names[mesh] = name
                self.last_mesh = op

    def _new_mesh(self, mesh_attr, base_name: str, loc) -> str:
        if self.last_mesh is None:
            first = next(iter(self.module.body.operations), None)
            ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(self.module.body)
        else:
            ip = ip_after_op(self.last_mesh)
        op = create_op("sdy.mesh", attributes={"sym_name": ir.StringAttr.get(base_name), "mesh": mesh_attr},
                       loc=loc, ip=ip)
        self.last_mesh = op
        self.changed = self.ops_changed = True
        return self.symbols.insert(op)

    def name_for_sdy_mesh(self, mesh_attr, loc) -> str:
        m = sdy.MeshAttr(mesh_attr)
        ids = list(m.device_ids)
        if not list(m.axes) and len(ids) == 1:
            base = f"maximal_mesh_{ids[0]}"
        elif not list(m.axes) and not ids:
            base = "empty_mesh"
        else:
            base = "mesh"
        return self._new_mesh(mesh_attr, base, loc)

    def lift_sharding(self, sharding, _value):
        new = self._lift(sharding)
        if new != sharding:
            self.changed = True
        return new

    def _lift(self, sharding):
        s = sdy.TensorShardingAttr(sharding)
        key = s.mesh_or_ref
        name = self.names.get(key)
        if name is None:
            if isinstance(key, ir.FlatSymbolRefAttr):
                return sharding
            name = self.name_for_sdy_mesh(key, self.module.operation.location)
            self.names[key] = name
        return sdy.TensorShardingAttr.get(ir.FlatSymbolRefAttr.get(name), list(s.dimension_shardings),
                                          list(s.replicated_axes), list(s.unreduced_axes))

    def lift_replica_groups(self, op) -> None:
        groups = replica_groups_on_mesh(op)
        if groups is None:
            return
        key = groups.mesh
        name = self.names.get(key)
        if name is None:
            if sdy.MeshAttr.isinstance(key):
                name = self.name_for_sdy_mesh(key, op.location)
            elif stablehlo.MeshAttr.isinstance(key):
                # Shardy keeps only the axes of a StableHLO mesh, always as "mesh".
                axes = [stablehlo.MeshAxisAttr(a) for a in stablehlo.MeshAttr(key).axes]
                sdy_mesh = sdy.MeshAttr.get([sdy.MeshAxisAttr.get(a.name, a.size) for a in axes], [])
                name = self._new_mesh(sdy_mesh, "mesh", op.location)
            else:
                return
            self.names[key] = name
        op.attributes["replica_groups"] = stablehlo.ReplicaGroupMeshAxesAttr.get(
            ir.FlatSymbolRefAttr.get(name), groups.axes)
        self.changed = True

    def attach_stablehlo_meshes(self) -> None:
        for op in self.module.body.operations:
            op = as_operation(op)
            if op.name == "sdy.mesh" and "stablehlo.mesh" not in op.attributes:
                op.attributes["stablehlo.mesh"] = stablehlo_mesh_dict(op.attributes["mesh"])
                self.changed = True


def _has_inlined_mesh(by_name: dict) -> bool:
    """Some sharding in the module has a mesh of its own (not a reference);
    `by_name`: the module's ops by name (each distinct sharding is looked at once)."""
    inlined = []

    def check(sharding, _value):
        if not isinstance(mesh_or_ref(sharding), ir.FlatSymbolRefAttr):
            inlined.append(sharding)
    walk_shardings(None, check, by_name=by_name)
    return bool(inlined)


def stablehlo_mesh_dict(mesh_attr) -> ir.Attribute:
    """`{axes = [{name = "x", size = 4 : i64}, ...], device_ids = dense<...>}`."""
    m = sdy.MeshAttr(mesh_attr)
    i64 = ir.IntegerType.get_signless(64)
    axes = [ir.DictAttr.get({"name": ir.StringAttr.get(a.name), "size": ir.IntegerAttr.get(i64, a.size)})
            for a in map(sdy.MeshAxisAttr, m.axes)]
    fields = {"axes": ir.ArrayAttr.get(axes)}
    ids = list(m.device_ids)
    if ids:
        fields["device_ids"] = ir.DenseIntElementsAttr.get(np.asarray(ids, dtype=np.int64))
    return ir.DictAttr.get(fields)


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    with module.context, module.operation.location:
        lifter = _MeshLifter(module)
        ops = found.all_ops()
        lifter.dedup_existing()
        # Without merged meshes, only inlined meshes change shardings: most
        # modules have none, which one look at each op, in any order, tells.
        if lifter.ops_changed or _has_inlined_mesh(found.by_names()):
            # the census' ops, unless a merged mesh symbol is gone from them
            transform_shardings(module.operation, lifter.lift_sharding, of_sharding_only=True,
                                ops=None if lifter.ops_changed else ops)
        for name in REPLICA_GROUP_OPS:
            for op in found.ops(name):
                lifter.lift_replica_groups(op)
        lifter.attach_stablehlo_meshes()
    if lifter.ops_changed:
        return None
    return SHARDINGS_ONLY if lifter.changed else PRESERVED
