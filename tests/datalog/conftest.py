import contextlib
import os
import shutil
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
HAVE_SOUFFLE = shutil.which("souffle") is not None
needs_souffle = pytest.mark.skipif(not HAVE_SOUFFLE, reason="souffle is not on PATH (it is not in the "
                                   "package registries; build it from souffle-lang/souffle to run these)")


def program_cases():
    return sorted(p.stem for p in PROGRAMS.glob("*.dl") if p.with_suffix(".expected").exists())


def read_expected(name: str) -> dict[str, set[tuple]]:
    """Blocks: a relation name line, then its tuples, tab-separated ('()' for
    the nullary tuple), values as Soufflé prints them."""
    out: dict[str, set[tuple]] = {}
    current = None
    outputs = _declared_outputs(name)
    for line in (PROGRAMS / f"{name}.expected").read_text().split("\n"):
        if not line:
            continue
        if line in outputs:
            current = line
            out[current] = set()
            continue
        out[current].add(() if line == "()" else tuple(line.split("\t")))
    return out


def _declared_outputs(name):
    from sdylog.datalog import load_program
    return set(load_program(str(PROGRAMS / f"{name}.dl")).outputs)


def as_text(rows, kinds) -> set[tuple]:
    def show(v, k):
        return format(v, "g") if k == "float" else str(v)
    return {tuple(show(v, k) for v, k in zip(r, kinds)) for r in rows}


@contextlib.contextmanager
def held_in(mode: str):
    """Engines made inside hold their relations in C ("c": the extension,
    where built) or as Python sets ("python": SDYLOG_NATIVE=0)."""
    old = os.environ.get("SDYLOG_NATIVE")
    os.environ["SDYLOG_NATIVE"] = "0" if mode == "python" else "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["SDYLOG_NATIVE"]
        else:
            os.environ["SDYLOG_NATIVE"] = old
