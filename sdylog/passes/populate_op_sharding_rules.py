"""-sdy-populate-op-sharding-rules: attach each op's sharding rule as `sdy.sharding_rule`.

Option conservative-propagation: build the rules of conservative propagation.
An op the registry does not know is an error here (Shardy warns), so that
the pass never prints a module with silently missing rules.
"""
from jaxlib.mlir import ir

from sdylog.ir.module import verify_module
from sdylog.ir.shardings import SHARDING_RULE
from sdylog.ir.walk import op_list
from sdylog.oprules import RuleCache



def run(module: ir.Module, options: dict, ctx) -> None:
    populate_rules(module, options["conservative-propagation"], ctx.filename)


def populate_rules(module: ir.Module, conservative: bool, filename: str, known: dict | None = None) -> None:
    """The pass. `known`: op -> the rule the registry gave it (with the same
    `conservative`) since the module last changed other than in shardings,
    e.g. by the facts of the propagation run just done (see
    sdylog/propagation/passes.py); other ops are looked up."""
    cache = RuleCache(conservative, filename, strict=True)
    known = known or {}
    # Build every rule before attaching any: an error leaves the module untouched.
    rules = []
    for op in op_list(module.operation):
        if SHARDING_RULE in op.attributes:
            continue
        rule = known.get(op) or cache.rule(op)
        if rule is not None:
            rules.append((op, cache.attr(rule)))
    for op, attr in rules:
        op.attributes[SHARDING_RULE] = attr
    # The sdy dialect checks each rule against its op (e.g. it rejects dynamic
    # shapes), as the verifier after Shardy's pass does.
    verify_module(module, filename)
