"""-sdy-remove-size-one-axes: drop axes of size 1 from every sharding.

A size-1 axis shards nothing, but two shardings that differ only in it look
different to propagation. The meshes keep their size-1 axes. Like Shardy, the
pass does nothing unless some `sdy.mesh` symbol has a size-1 axis.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import Meshes, transform_shardings
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED, census


def _without_size_one(sharding, meshes: Meshes):
    mesh = meshes.of(sharding)
    sizes = mesh.axis_sizes

    def keep(axis) -> bool:
        return axis.size(sizes[axis.name]) != 1

    t = TensorSharding.from_attr(sharding)
    dims = []
    for d in t.dims:
        axes = tuple(filter(keep, d.axes))
        # A closed dimension without axes may not carry a priority.
        priority = None if not axes and d.is_closed else d.priority
        dims.append(DimSharding(axes, d.is_closed, priority))
    new = TensorSharding(t.mesh, tuple(dims), tuple(filter(keep, t.replicated)),
                         tuple(filter(keep, t.unreduced)))
    return sharding if new == t else new.to_attr()


def run(module: ir.Module, options: dict, ctx):
    with module.context:
        meshes = Meshes(module)
        if not any(a.size == 1 for name in meshes.attrs for a in meshes.named(name).axes):
            return PRESERVED
        transform_shardings(module.operation, lambda s, _v: _without_size_one(s, meshes), of_sharding_only=True,
                            ops=census(module, ctx).all_ops())
    return SHARDINGS_ONLY
