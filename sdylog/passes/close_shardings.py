"""-sdy-close-shardings: close every dimension of every sharding and drop
replicated axes (keeping priorities and unreduced axes)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import transform_shardings
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED, census


def closed_like(sharding):
    """The sharding closed, without replicated axes (`sharding` itself when it is)."""
    t = TensorSharding.from_attr(sharding)
    if not t.replicated and all(d.is_closed for d in t.dims):
        return sharding
    dims = tuple(DimSharding(d.axes, True, d.priority) for d in t.dims)
    return TensorSharding(t.mesh, dims, (), t.unreduced).to_attr()


def run(module: ir.Module, options: dict, ctx):
    with module.context:
        # (each sharding is closed on its own: the order ops come in does not matter)
        changed = transform_shardings(module.operation, lambda s, _v: closed_like(s), of_sharding_only=True,
                                      by_name=census(module, ctx).by_names())
    return SHARDINGS_ONLY if changed else PRESERVED
