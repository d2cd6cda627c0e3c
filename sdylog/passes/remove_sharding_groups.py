"""-sdy-remove-sharding-groups: erase every `sdy.sharding_group` (they only
constrain propagation)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.walk import walk_ops


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        for op in [op for op in walk_ops(module.operation) if op.name == "sdy.sharding_group"]:
            op.erase()
