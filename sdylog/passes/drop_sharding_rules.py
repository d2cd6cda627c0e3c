"""-sdy-drop-sharding-rules: remove `sdy.sharding_rule` from every op, except
custom rules (written by the user, not derived by the registry)."""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.shardings import SHARDING_RULE
from sdylog.passes.census import SHARDINGS_ONLY, PRESERVED, census


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    custom: dict = {}   # rule -> is it custom (rules repeat: each distinct one is read once)
    dropped = False
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            for op in found.within(func):
                attrs = op.attributes   # each read goes through the bindings: once
                if SHARDING_RULE not in attrs:
                    continue
                rule = attrs[SHARDING_RULE]
                is_custom = custom.get(rule)
                if is_custom is None:
                    is_custom = custom[rule] = sdy.OpShardingRuleAttr(rule).is_custom
                if not is_custom:
                    del attrs[SHARDING_RULE]
                    dropped = True
    return SHARDINGS_ONLY if dropped else PRESERVED
