"""sdylog: Shardy-style sharding propagation decided by Datalog rules."""
from pathlib import Path

__version__ = "0.1.0"

# The rule files live beside the package in the source tree (rules/*.dl).
RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
