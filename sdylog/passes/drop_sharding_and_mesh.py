"""-sdy-drop-sharding-and-mesh: remove every `sdy.sharding` (on ops, function
arguments and results) and every `sdy.mesh` symbol."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.walk import walk_ops

_KEY = "sdy.sharding"


def run(module: ir.Module, options: dict, ctx) -> None:
    for op in walk_ops(module.operation):
        if _KEY in op.attributes:
            del op.attributes[_KEY]
        if op.name == "func.func":
            for key in ("arg_attrs", "res_attrs"):
                if key in op.attributes:
                    op.attributes[key] = _without_sharding(op.attributes[key])
    for op in list(module.body.operations):
        if op.operation.name == "sdy.mesh":
            op.operation.erase()


def _without_sharding(array_attr) -> ir.Attribute:
    dicts = []
    for d in ir.ArrayAttr(array_attr):
        d = ir.DictAttr(d)
        dicts.append(ir.DictAttr.get({d[i].name: d[i].attr for i in range(len(d)) if d[i].name != _KEY}))
    return ir.ArrayAttr.get(dicts)
