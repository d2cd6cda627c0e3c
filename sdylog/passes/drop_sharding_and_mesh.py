"""-sdy-drop-sharding-and-mesh: remove every `sdy.sharding` (on ops, function
arguments and results) and every `sdy.mesh` symbol."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import erase_module_meshes
from sdylog.passes.census import PRESERVED, Invalidated, census

_KEY = "sdy.sharding"


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    changed = False
    for op in found.all_ops():
        attrs = op.attributes
        if _KEY in attrs:
            del attrs[_KEY]
            changed = True
    for op in found.ops("func.func"):
        for key in ("arg_attrs", "res_attrs"):
            if key in op.attributes:
                new = _without_sharding(op.attributes[key])
                changed |= new != op.attributes[key]
                op.attributes[key] = new
    meshes = erase_module_meshes(module, found.ops("sdy.mesh"))
    if not (changed or meshes):
        return PRESERVED
    return Invalidated(frozenset({"sdy.mesh"}) if meshes else frozenset())


def _without_sharding(array_attr) -> ir.Attribute:
    dicts = []
    for d in ir.ArrayAttr(array_attr):
        d = ir.DictAttr(d)
        dicts.append(ir.DictAttr.get({d[i].name: d[i].attr for i in range(len(d)) if d[i].name != _KEY}))
    return ir.ArrayAttr.get(dicts)
