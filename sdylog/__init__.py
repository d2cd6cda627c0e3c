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

# The rule files live beside the package in the source tree (rules/*.dl).
RULES_DIR = Path(__file__).resolve().parent.parent / "rules"

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
