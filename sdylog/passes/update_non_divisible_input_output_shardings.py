"""-sdy-update-non-divisible-input-output-shardings: make function inputs and
outputs (and call results, and manual computation owners) evenly sharded.

A dimension whose size the sharding does not divide keeps the longest prefix
of its axes that does: whole axes while they divide what is left, then the
largest sub-axis that still divides (its gcd with what is left), then
nothing more. Such a dimension loses its priority.
"""
from __future__ import annotations

import math
from functools import lru_cache

from jaxlib.mlir import ir

from sdylog.ir.rewrite import as_operation
from sdylog.ir.shardings import (Meshes, block_arg_owner_shardings, block_arg_owners, func_type,
                                 keeps_owner_shardings_divisible, map_func_shardings, op_shardings,
                                 result_owner_shardings, result_owners, set_block_arg_owner_shardings,
                                 set_op_shardings, set_result_owner_shardings)
from sdylog.ir.types import static_shape
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED, census


@lru_cache(maxsize=4096)
def evenly_sharded(sharding, type_, mesh):
    """The sharding made even for a value of type `type_` (`sharding` itself
    when it is, as most are, or when the type has no static shape). `mesh`:
    the attribute of the sharding's mesh. (Kept: attributes and types are
    uniqued, and modules, and the runs of a process, repeat the same few.)"""
    shape = static_shape(type_)
    if shape is None:
        return sharding
    t = TensorSharding.from_attr(sharding)
    sizes = Mesh.from_attr(mesh).axis_sizes
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
    if dims == list(t.dims):
        return sharding
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
            new = self._done[key] = evenly_sharded(sharding, type_, self.meshes.attr_of(sharding))
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
            changed |= _make_even(call, op_shardings, set_op_shardings, lambda: list(call.results), evener)
        for op in found.ops("sdy.manual_computation"):
            if keeps_owner_shardings_divisible(op):
                changed |= _make_even(op, block_arg_owner_shardings, set_block_arg_owner_shardings,
                                      lambda: block_arg_owners(op), evener)
                changed |= _make_even(op, result_owner_shardings, set_result_owner_shardings,
                                      lambda: result_owners(op), evener)
    # (PRESERVED when every sharding was even already, as on a module this pass
    # ran on before: the facts extracted before it stay valid, sdylog/facts/shared.py)
    return SHARDINGS_ONLY if changed else PRESERVED


def _make_even(op, get, put, owners, evener: _Evener) -> bool:
    """put(op, the list of shardings get(op) made even for owners()) when
    that differs from it; whether it did."""
    shardings = get(op)
    if not shardings:
        return False
    even = evener.of_list(owners(), shardings)
    if even == shardings:
        return False
    put(op, even)
    return True
