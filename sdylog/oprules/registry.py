"""Op name -> sharding rule builder: one table."""
from __future__ import annotations

from sdylog.ir.walk import rank_of, shape_of
from sdylog.model.rule import OpShardingRule, RuleBuilder


def pointwise(op, conservative: bool) -> OpShardingRule:
    """Every dimension of every operand and result is one factor."""
    b = RuleBuilder([rank_of(v) for v in op.operands], [rank_of(v) for v in op.results])
    return b.add_pointwise(shape_of(op.results[0])).build()


_ELEMENTWISE = [
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert",
    "cosine", "count_leading_zeros", "divide", "exponential", "exponential_minus_one", "floor",
    "imag", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum", "multiply",
    "negate", "not", "or", "popcnt", "power", "real", "reduce_precision", "remainder",
    "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan",
    "tanh", "xor",
]

RULES = {f"stablehlo.{name}": pointwise for name in _ELEMENTWISE}


def rule_for_op(op, conservative: bool = False, filename: str | None = None) -> OpShardingRule | None:
    op = op.operation if hasattr(op, "operation") else op
    if "sdy.sharding_rule" in op.attributes:
        return OpShardingRule.from_attr(op.attributes["sdy.sharding_rule"])
    build = RULES.get(op.name)
    return build(op, conservative) if build else None
