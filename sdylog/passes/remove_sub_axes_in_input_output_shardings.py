"""-sdy-remove-sub-axes-in-input-output-shardings: in the main function's argument
and result shardings, cut every open dimension at its first sub-axis (the
sub-axis and everything after it go). Closed dimensions stay as they are."""
from __future__ import annotations

from dataclasses import replace

from jaxlib.mlir import ir

from sdylog.ir.shardings import map_func_shardings, once_per_sharding
from sdylog.ir.symbols import main_func
from sdylog.model.sharding import TensorSharding
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED


def without_sub_axes(sharding):
    """The sharding with each open dimension cut at its first sub-axis
    (`sharding` itself when no open dimension has one: most have none)."""
    t = TensorSharding.from_attr(sharding)
    if not any(a.sub is not None for d in t.dims if not d.is_closed for a in d.axes):
        return sharding
    dims = []
    for d in t.dims:
        if d.is_closed:
            dims.append(d)
            continue
        axes = []
        for a in d.axes:
            if a.sub is not None:
                break
            axes.append(a)
        dims.append(replace(d, axes=tuple(axes)))
    return replace(t, dims=tuple(dims)).to_attr()


def run(module: ir.Module, options: dict, ctx):
    # (arguments repeat shardings: each distinct one is rewritten once)
    cut_sub_axes = once_per_sharding(lambda sharding, _: without_sub_axes(sharding))

    with module.context:
        func = main_func(module, ctx.filename)
        changed = map_func_shardings(func, cut_sub_axes)
        changed |= map_func_shardings(func, cut_sub_axes, results=True)
    return SHARDINGS_ONLY if changed else PRESERVED
