"""Choosing and making an engine: sdylog's own, in memory, for every command;
`sdylog datalog` also runs programs on a `souffle` binary, as a cross-check
(runner.run_like_souffle)."""
from __future__ import annotations

import os
import shutil

from sdylog import ENGINES
from sdylog.datalog.lexer import error
from sdylog.datalog.memory_engine import MemoryEngine   # (loaded with this module: every command makes one)


def souffle_path() -> str | None:
    return shutil.which("souffle")


def propagation_engine(chosen: str | None = None) -> str:
    """The engine asked for: `chosen` (--engine), else $SDYLOG_ENGINE, else
    the in-memory one."""
    name = chosen or os.environ.get("SDYLOG_ENGINE") or "memory"
    if name not in ENGINES:
        raise error(None, f"unknown Datalog engine '{name}'"
                    f"{' (from SDYLOG_ENGINE)' if not chosen else ''}: choose from {', '.join(ENGINES)}")
    return name


def make_engine(program=None, engine: str | None = None, *, provenance: bool = False):
    name = propagation_engine(engine)
    if name != "memory":
        raise error(None, f"the {name} engine{'' if engine else ' (from $SDYLOG_ENGINE)'} runs only in `sdylog datalog "
                    f"PROGRAM.dl --engine {name}`, a cross-check of sdylog's own engine, which the other "
                    f"commands run")
    return MemoryEngine(program, provenance=provenance)
