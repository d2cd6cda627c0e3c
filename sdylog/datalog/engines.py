"""Choosing and making an engine: sdylog's own, in memory (the default
everywhere), or Soufflé where a `souffle` binary is installed (a cross-check)."""
from __future__ import annotations

import os
import shutil

from sdylog import ENGINES
from sdylog.datalog.lexer import error
from sdylog.datalog.memory_engine import MemoryEngine   # (the default: loaded with this module; Soufflé's when asked)


def souffle_path() -> str | None:
    return shutil.which("souffle")


def propagation_engine(chosen: str | None = None) -> str:
    """The engine every command uses: `chosen` (--engine), else
    $SDYLOG_ENGINE, else the in-memory one."""
    name = chosen or os.environ.get("SDYLOG_ENGINE") or "memory"
    if name not in ENGINES:
        raise error(None, f"unknown Datalog engine '{name}'"
                    f"{' (from SDYLOG_ENGINE)' if not chosen else ''}: choose from {', '.join(ENGINES)}")
    return name


def make_engine(program=None, engine: str | None = None, *, provenance: bool = False):
    name = propagation_engine(engine)
    if name == "souffle":
        from sdylog.datalog.souffle_engine import SouffleEngine
        return SouffleEngine(program, provenance=provenance)
    return MemoryEngine(program, provenance=provenance)
