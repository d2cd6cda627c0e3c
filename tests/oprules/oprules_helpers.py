"""Helpers for the oprules tests: the rule sdylog gives one op of a small module."""
from __future__ import annotations

from sdylog.ir import parse_module
from sdylog.ir.walk import walk_ops
from sdylog.oprules import rule_for_op


def rule_text(text: str, op_name: str, conservative: bool = False, index: int = 0) -> str | None:
    """The printed rule of the `index`-th op named `op_name` in `text`."""
    module = parse_module(text)
    with module.context:
        ops = [op for op in walk_ops(module.operation) if op.name == op_name]
        rule = rule_for_op(ops[index], conservative=conservative)
        return str(rule.to_attr()) if rule is not None else None


def rule_str(body: str) -> str:
    return f"#sdy.op_sharding_rule<{body}>"
