"""-sdy-remove-sharding-groups: erase every `sdy.sharding_group` (they only
constrain propagation)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.passes.census import rewrite_each


def run(module: ir.Module, options: dict, ctx):
    return rewrite_each(module, ctx, "sdy.sharding_group", ir.Operation.erase)
