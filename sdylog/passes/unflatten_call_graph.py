"""-sdy-unflatten-call-graph: calls to copies of one function that ended up with
the same shardings call one copy again.

Two functions are interchangeable when they have the same original name
(`sdy.original_func_name`, else their own), the same `sdy.func_manual_axes`
and the same argument and result shardings. Each call goes to the first such
function called in the module. With `dedup-functions-fully`, shardings are
ignored and the function with the most call sites (the first on ties) wins.
The two marker attributes are then removed from every function.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import (FUNC_MANUAL_AXES, Meshes,
                                 func_arg_shardings_or_open, func_result_shardings_or_open)
from sdylog.ir.symbols import (ORIGINAL_FUNC_NAME, SymbolTable, callee_of,
                               original_func_name, symbol_name_of)
from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED, census


def _freeze(shardings):
    return None if shardings is None else tuple(shardings)


class _Keys:
    """Each function's key, read once (a function is asked for at each of
    its calls, and again when choosing)."""

    def __init__(self, meshes: Meshes):
        self.meshes = meshes
        self._read: dict = {}   # (symbol name, ignore_shardings) -> key

    def of(self, func, ignore_shardings: bool = False):
        at = (symbol_name_of(func), ignore_shardings)
        key = self._read.get(at)
        if key is None:
            key = self._read[at] = self._key(func, ignore_shardings)
        return key

    def _key(self, func, ignore_shardings: bool):
        manual = func.attributes[FUNC_MANUAL_AXES] if FUNC_MANUAL_AXES in func.attributes else None
        if ignore_shardings:
            return (original_func_name(func), manual, None, None)
        return (original_func_name(func), manual,
                _freeze(func_arg_shardings_or_open(func, self.meshes)),
                _freeze(func_result_shardings_or_open(func, self.meshes)))


def run(module: ir.Module, options: dict, ctx):
    fully = options["dedup-functions-fully"]
    found = census(module, ctx)
    calls = found.ops("func.call")
    funcs = found.ops("func.func")
    if not calls and not any(n in f.attributes for f in funcs for n in (ORIGINAL_FUNC_NAME, FUNC_MANUAL_AXES)):
        return PRESERVED
    with module.context:
        symbols = SymbolTable(module)
        keys = _Keys(Meshes(module))
        callees = [callee_of(symbols, c, ctx.filename) for c in calls]
        chosen: dict = {}
        for func in callees:
            chosen.setdefault(keys.of(func, ignore_shardings=fully), func)
        if fully:
            counts: dict = {}
            for func in callees:
                own = keys.of(func)
                counts[own] = counts.get(own, 0) + 1
                group = keys.of(func, ignore_shardings=True)
                if counts[own] > counts.get(keys.of(chosen[group]), 0):
                    chosen[group] = func
        changed = False
        for call, func in zip(calls, callees):
            target = chosen[keys.of(func, ignore_shardings=fully)]
            if target != func:
                call.attributes["callee"] = ir.FlatSymbolRefAttr.get(symbol_name_of(target))
                changed = True
        for op in funcs:
            for name in (ORIGINAL_FUNC_NAME, FUNC_MANUAL_AXES):
                if name in op.attributes:
                    del op.attributes[name]
                    changed = True
    # (callees and markers are attributes: no op created, erased or moved)
    return ATTRIBUTES_ONLY if changed else PRESERVED
