"""sdylog: Shardy-style sharding propagation decided by Datalog rules."""
from pathlib import Path

__version__ = "0.1.0"

# The Datalog engines every command offers (--engine; made by sdylog/datalog/engines.py).
ENGINES = ("duckdb", "memory", "souffle")


def _rules_dir() -> Path:
    """The folder of the rule files: the package data of sdylog.rules where
    sdylog is installed (rules/ of the repository, mapped by setup.py; the
    rules' `#include`s resolve beside them), else rules/ beside this package
    in a source tree that was never installed."""
    from importlib.resources import files
    try:
        return Path(files("sdylog.rules"))   # (a folder on disk: `#include` and the caches need paths)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "rules"


RULES_DIR = _rules_dir()
