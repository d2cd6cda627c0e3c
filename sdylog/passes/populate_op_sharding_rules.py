"""-sdy-populate-op-sharding-rules: attach each op's sharding rule as `sdy.sharding_rule`."""
from jaxlib.mlir import ir

from sdylog.ir.walk import walk_ops
from sdylog.oprules import rule_for_op


def run(module: ir.Module, options: dict, ctx) -> None:
    conservative = options["conservative-propagation"]
    for op in walk_ops(module.operation):
        if "sdy.sharding_rule" not in op.attributes:
            rule = rule_for_op(op, conservative=conservative, filename=ctx.filename)
            if rule is not None:
                op.attributes["sdy.sharding_rule"] = rule.to_attr()
