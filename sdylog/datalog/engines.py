"""Choosing and making an engine: in memory, the embedded DuckDB one, or Soufflé where installed."""
from __future__ import annotations

import os
import shutil

from sdylog import ENGINES
from sdylog.datalog.lexer import error


def souffle_path() -> str | None:
    return shutil.which("souffle")


def available_engines() -> list[str]:
    return ["duckdb", "memory"] + (["souffle"] if souffle_path() else [])


def default_engine(provenance: bool = False) -> str:
    """$SDYLOG_ENGINE if set; else Soufflé when it is on PATH (and no
    provenance is asked for, which only the embedded engine records)."""
    chosen = os.environ.get("SDYLOG_ENGINE")
    if chosen:
        return chosen
    return "souffle" if souffle_path() and not provenance else "duckdb"


def propagation_engine(chosen: str | None = None) -> str:
    """The engine every command uses, propagation's and the others' alike:
    `chosen` (--engine), else $SDYLOG_ENGINE, else the in-memory one (on
    the corpus models it evaluates the propagation program 1.5x (L48) to 4x
    (L8) faster than DuckDB, whose fixed cost per statement dominates; both
    run the rank-ordered stratum the same way)."""
    name = chosen or os.environ.get("SDYLOG_ENGINE") or "memory"
    if name not in ENGINES:
        raise error(None, f"unknown Datalog engine '{name}'"
                    f"{' (from SDYLOG_ENGINE)' if not chosen else ''}: choose from {', '.join(ENGINES)}")
    return name


def make_engine(program=None, engine: str | None = None, *, provenance: bool = False):
    name = engine or default_engine(provenance)
    if name == "duckdb":
        from sdylog.datalog.duckdb_engine import DuckDBEngine
        return DuckDBEngine(program, provenance=provenance)
    if name == "memory":
        from sdylog.datalog.memory_engine import MemoryEngine
        return MemoryEngine(program, provenance=provenance)
    if name == "souffle":
        from sdylog.datalog.souffle_engine import SouffleEngine
        return SouffleEngine(program, provenance=provenance)
    raise error(None, f"unknown Datalog engine '{name}' (choose from {', '.join(ENGINES)})")
