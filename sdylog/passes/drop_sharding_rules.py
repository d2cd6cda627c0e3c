"""-sdy-drop-sharding-rules: remove `sdy.sharding_rule` from every op, except
custom rules (written by the user, not derived by the registry)."""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.shardings import SHARDING_RULE
from sdylog.ir.walk import walk_ops


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            for op in walk_ops(func.operation):
                if SHARDING_RULE in op.attributes and not sdy.OpShardingRuleAttr(op.attributes[SHARDING_RULE]).is_custom:
                    del op.attributes[SHARDING_RULE]
