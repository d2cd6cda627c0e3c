"""sdylog: Shardy-style sharding propagation decided by Datalog rules.

From Python: `sdylog.propagate(src)` (sdylog/api.py) takes a jax `Lowered`,
a `jax.export.Exported`, MLIR text or a path and returns a `Propagation`:
every value's sharding by JAX's names, `in_specs` / `out_specs` as
PartitionSpecs, conflicts, `.explain(name)`, `.show(name)`, `.to_duckdb(path)`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# The Datalog engines `sdylog datalog` runs (--engine, $SDYLOG_ENGINE; sdylog/datalog/engines.py):
# every other command runs the memory one.
ENGINES = ("memory", "souffle")


def _rules_dir() -> Path:
    """The folder of the rule files: the package data of sdylog.rules where
    sdylog is installed (rules/ of the repository, mapped by setup.py; the
    rules' `#include`s resolve beside them), else rules/ beside this package
    in a source tree that was never installed. (Found as the import system
    finds the package, without importing it nor importlib.resources: 6 ms
    of every start.)"""
    from importlib.util import find_spec
    spec = find_spec("sdylog.rules")
    if spec is not None and spec.submodule_search_locations:
        return Path(spec.submodule_search_locations[0])   # (a folder on disk: `#include` and the caches need paths)
    return Path(__file__).resolve().parent.parent / "rules"


RULES_DIR = _rules_dir()

if TYPE_CHECKING:
    from sdylog.api import Propagation, ValueSharding, propagate

__all__ = ["Propagation", "ValueSharding", "propagate", "RULES_DIR"]
_API = ("Propagation", "ValueSharding", "propagate")


def __getattr__(name: str):
    # (imported on first use: `import sdylog` alone, as the CLI does, loads no MLIR)
    if name in _API:
        from sdylog import api
        return getattr(api, name)
    raise AttributeError(f"module 'sdylog' has no attribute {name!r}")
