"""-sdy-update-non-divisible-input-output-shardings: make function inputs and
outputs (and call results, and manual computation owners) evenly sharded.

A dimension whose size the sharding does not divide keeps the longest prefix
of its axes that does: whole axes while they divide what is left, then the
largest sub-axis that still divides (its gcd with what is left), then
nothing more. Such a dimension loses its priority.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation
from sdylog.ir.shardings import (Meshes, block_arg_owner_shardings, block_arg_owners, func_type,
                                 keeps_owner_shardings_divisible, map_func_shardings, op_shardings,
                                 result_owner_shardings, result_owners, set_block_arg_owner_shardings,
                                 set_op_shardings, set_result_owner_shardings)
from sdylog.ir.types import static_shape
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED, census


def evenly_sharded(sharding, shape, meshes: Meshes):
    mesh = meshes.of(sharding)
    sizes = mesh.axis_sizes
    t = TensorSharding.from_attr(sharding)
    dims = []
    for d, dim_size in zip(t.dims, shape):  # a maximal-mesh sharding has no dimensions
        sharded = math.prod(a.size(sizes[a.name]) for a in d.axes)
        if dim_size % sharded == 0:
            dims.append(d)
            continue
        remaining, axes = dim_size, []
        for a in d.axes:
            axis_size = a.size(sizes[a.name])
            g = math.gcd(axis_size, remaining)
            if g == 1:
                break
            if g == axis_size:
                axes.append(a)
                remaining //= g
            else:
                axes.append(AxisRef(a.name, SubAxis(a.sub.pre_size if a.sub else 1, g)))
                break
        dims.append(DimSharding(tuple(axes), d.is_closed))
    return TensorSharding(t.mesh, tuple(dims), t.replicated, t.unreduced).to_attr()


class _Evener:
    """evenly_sharded once per distinct (sharding, type): inputs repeat them."""

    def __init__(self, meshes: Meshes):
        self.meshes = meshes
        self._done: dict = {}

    def of(self, sharding, type_):
        """The sharding made even for a value of `type_` (as is if not statically shaped)."""
        key = (sharding, type_)
        new = self._done.get(key)
        if new is None:
            shape = static_shape(type_)
            new = evenly_sharded(sharding, shape, self.meshes) if shape is not None else sharding
            self._done[key] = new
        return new

    def of_list(self, values, shardings) -> list:
        return [self.of(s, v.type) for v, s in zip(values, shardings, strict=True)]


def run(module: ir.Module, options: dict, ctx):
    changed = False
    found = census(module, ctx)
    with module.context:
        evener = _Evener(Meshes(module))
        for func in [as_operation(op) for op in module.body.operations if op.operation.name == "func.func"]:
            ft = func_type(func)
            for types, results in ((list(ft.inputs), False), (list(ft.results), True)):
                changed |= map_func_shardings(func, lambda s, i, types=types: evener.of(s, types[i]),
                                              results=results)
        for call in found.ops("func.call"):
            lst = op_shardings(call)
            if lst:
                set_op_shardings(call, evener.of_list(list(call.results), lst))
                changed = True
        for op in found.ops("sdy.manual_computation"):
            if not keeps_owner_shardings_divisible(op):
                continue
            changed = True
            lst = block_arg_owner_shardings(op)
            if lst:
                set_block_arg_owner_shardings(op, evener.of_list(block_arg_owners(op), lst))
            lst = result_owner_shardings(op)
            if lst:
                set_result_owner_shardings(op, evener.of_list(result_owners(op), lst))
    return ATTRIBUTES_ONLY if changed else PRESERVED
