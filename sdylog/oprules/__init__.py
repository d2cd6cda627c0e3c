"""The sharding rule of every op Shardy's registry covers (and of the chlo ops
and einsum JAX emits, which XLA rewrites into such ops before Shardy runs).

`rule_for_op(op, conservative=False, filename=None, strict=False)` looks the
op's name up in one table (registry.RULES: op name -> function that builds
its OpShardingRule from the op) and returns None for ops without a rule. A
user rule already on the op (`sdy.sharding_rule`) wins. Ops the registry
does not know have no rule; with strict=True they are an SdylogError instead
(what -sdy-populate-op-sharding-rules reports). `RuleCache` builds each
distinct rule (and its attribute) once for a module's many ops; `rule_key`
says which ops share a rule.

Builders by family: elementwise, collectives, shape_ops (broadcast, reshape,
transpose, slicing, padding, concatenation), contraction (dot, einsum, convolution),
reductions (reduce, windows, sort), indexing (gather, scatter), linalg
(cholesky, triangular_solve, fft, rng), custom_call (by call target).
"""
from sdylog.oprules.registry import RULES, RuleCache, rule_for_op, rule_key

__all__ = ["RULES", "RuleCache", "rule_for_op", "rule_key"]
