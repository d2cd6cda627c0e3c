"""Which ops a module holds, by name: one walk shared by the passes of a
pipeline until one of them changes the module.

Most passes of -sdy-propagation-pipeline look for a few kinds of ops (calls,
named or manual computations, sharding groups, data-flow edges, ...) that
most modules do not have; through the bindings, a walk over a large module
costs more than such a pass's whole work. A pass asks `census(module, ctx)`
whether its ops are there (and may take them from it, in walk order) and
returns UNCHANGED when it left the module as it was.

The census is shared only inside `pipelines.run_steps`, which drops it after
any step that did not return UNCHANGED; elsewhere every call walks afresh.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from sdylog.ir.shardings import Meshes
from sdylog.ir.symbols import SymbolTable, callee_of
from sdylog.ir.walk import op_list

# What a pass returns when it did not touch the module: the pipeline then
# keeps its census.
UNCHANGED = False


@dataclass
class Census:
    module: ir.Module
    by_name: dict[str, list[ir.Operation]]

    @staticmethod
    def of(module: ir.Module) -> Census:
        by_name: dict[str, list] = {}
        for op in op_list(module.operation):
            name = op.name
            lst = by_name.get(name)
            if lst is None:
                by_name[name] = [op]
            else:
                lst.append(op)
        return Census(module, by_name)

    def has(self, *names: str) -> bool:
        """The module holds an op with one of these names."""
        return any(n in self.by_name for n in names)

    def ops(self, name: str) -> list[ir.Operation]:
        """The ops with this name, in walk order (pre-order)."""
        return list(self.by_name.get(name, ()))

    def ops_of(self, names) -> list[ir.Operation]:
        """The ops with any of these names, in walk order (pre-order)."""
        wanted = [n for n in names if n in self.by_name]
        if len(wanted) <= 1:
            return self.ops(wanted[0]) if wanted else []
        return [op for op in op_list(self.module.operation) if op.name in wanted]


def rewrite_each(module: ir.Module, ctx, name: str, rewrite):
    """REWRITE every op named NAME (walk order), in the module's context: a pass
    that only rewrites such ops one by one. UNCHANGED when there is none."""
    ops = census(module, ctx).ops(name)
    if not ops:
        return UNCHANGED
    with module.context:
        for op in ops:
            rewrite(op)


def rewrite_each_call(module: ir.Module, ctx, rewrite):
    """REWRITE(call, callee, meshes) for every `func.call` (walk order); the
    callee is looked up only when REWRITE asks for it (`callee()`), an error
    at the call if there is none. UNCHANGED when the module has no call."""
    symbols = meshes = None

    def rewrite_call(call):
        nonlocal symbols, meshes
        if symbols is None:   # only for a module with calls
            symbols, meshes = SymbolTable(module), Meshes(module)
        rewrite(call, lambda: callee_of(symbols, call, ctx.filename), meshes)
    return rewrite_each(module, ctx, "func.call", rewrite_call)


def census(module: ir.Module, ctx=None) -> Census:
    """The module's census: the pipeline's shared one when it is current, else a fresh walk."""
    shared = getattr(ctx, "census", None)
    if shared is None:
        return Census.of(module)
    current = shared.get("census")
    if current is None or current.module is not module:
        current = shared["census"] = Census.of(module)
    return current
