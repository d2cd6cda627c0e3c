"""Datalog in Soufflé's language: front end, sdylog's in-memory engine, Soufflé as a cross-check.

    from sdylog.datalog import load_program, make_engine
    program = load_program("rules/propagate.dl")
    engine = make_engine(program)          # sdylog's own, in memory
    engine.load("Edge", [(1, 2), (2, 3)])
    engine.run()
    engine.read("Path")                    # sorted list of tuples

Nothing here imports duckdb: only saving a database does.
"""
from sdylog.datalog.program import Program, load_program, parse_program

__all__ = ["Program", "load_program", "parse_program", "make_engine"]


def make_engine(program=None, engine: str | None = None, *, provenance: bool = False):
    from sdylog.datalog.engines import make_engine as _make
    return _make(program, engine, provenance=provenance)

