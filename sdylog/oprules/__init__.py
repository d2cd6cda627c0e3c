"""The sharding rule of every op Shardy's registry covers.

`rule_for_op(op)` looks the op's name up in one table (op name -> function
that builds its OpShardingRule from the op) and returns None for ops without
a rule. A user rule already on the op (`sdy.sharding_rule`) wins.
"""
from sdylog.oprules.registry import rule_for_op

__all__ = ["rule_for_op"]
