"""-sdy-populate-op-sharding-rules: attach each op's sharding rule as `sdy.sharding_rule`.

Option conservative-propagation: build the rules of conservative propagation.
An op the registry does not know is an error here (Shardy warns), so that
the pass never prints a module with silently missing rules.
"""
from jaxlib.mlir import ir

from sdylog.ir.module import verify_module
from sdylog.ir.walk import walk_ops
from sdylog.oprules import rule_for_op


def run(module: ir.Module, options: dict, ctx) -> None:
    conservative = options["conservative-propagation"]
    # Build every rule before attaching any: an error leaves the module untouched.
    rules = []
    for op in walk_ops(module.operation):
        if "sdy.sharding_rule" in op.attributes:
            continue
        rule = rule_for_op(op, conservative=conservative, filename=ctx.filename, strict=True)
        if rule is not None:
            rules.append((op, rule))
    for op, rule in rules:
        op.attributes["sdy.sharding_rule"] = rule.to_attr()
    # The sdy dialect checks each rule against its op (e.g. it rejects dynamic
    # shapes), as the verifier after Shardy's pass does.
    verify_module(module, ctx.filename)
