"""Op name -> lowering (op -> closures), and how each op's result may alias its operands.

Lowerings register themselves with `@lowering(names..., alias=...)` in the
modules of `sdylog.simulate.ops`; this module loads them all on first use.

alias kinds (used to decide when an element-wise op may write in place):
  "fresh"  - results are new arrays of exactly the result type;
  "view"   - results may be views of operand 0;
  "opaque" - results may be any operand, a cached array, or a view of one
             (the default; operands of such ops are treated as escaping).
"""
from __future__ import annotations

import importlib
from typing import Callable

_LOWERINGS: dict[str, Callable] = {}
_ALIAS: dict[str, str] = {}
_TARGETS: dict[str, Callable] = {}   # custom_call target -> lowering (misc.py's custom_call asks)

_OP_MODULES = (
    "sdylog.simulate.ops.elementwise",
    "sdylog.simulate.ops.shapes",
    "sdylog.simulate.ops.indexing",
    "sdylog.simulate.ops.reductions",
    "sdylog.simulate.ops.linalg",
    "sdylog.simulate.ops.control",
    "sdylog.simulate.ops.collectives",
    "sdylog.simulate.ops.sdy_ops",
    "sdylog.simulate.ops.misc",
    "sdylog.simulate.ops.testing",
    "sdylog.simulate.ops.chlo",
    "sdylog.simulate.ops.p2p",
    "sdylog.simulate.ops.rng",
)
_loaded = False


def lowering(*names: str, alias: str = "opaque"):
    def register(fn):
        for n in names:
            _LOWERINGS[n] = fn
            _ALIAS[n] = alias
        return fn
    return register


def custom_call_target(name: str):
    """Register the lowering of `stablehlo.custom_call @name`."""
    def register(fn):
        _TARGETS[name] = fn
        return fn
    return register


def custom_call_lowering(target: str) -> Callable | None:
    _load()
    return _TARGETS.get(target)


def _load() -> None:
    global _loaded
    if not _loaded:
        for m in _OP_MODULES:
            importlib.import_module(m)
        _loaded = True


def lowering_for(op) -> Callable | None:
    _load()
    return _LOWERINGS.get(op.name)


def alias_kind(op) -> str:
    _load()
    return _ALIAS.get(op.name, "opaque")


def supported_ops() -> list[str]:
    _load()
    return sorted(_LOWERINGS)
