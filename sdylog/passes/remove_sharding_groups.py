"""-sdy-remove-sharding-groups: erase every `sdy.sharding_group` (they only
constrain propagation)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.passes.census import UNCHANGED, census


def run(module: ir.Module, options: dict, ctx):
    groups = census(module, ctx).ops("sdy.sharding_group")
    if not groups:
        return UNCHANGED
    with module.context:
        for op in groups:
            op.erase()
