"""What every rule builder reads from an op: shapes, attributes, producers.

A builder is `build(op, conservative) -> OpShardingRule | None`; it may
assume the op verified (the IR layer verifies every module it parses).
"""
from __future__ import annotations

from typing import NamedTuple

from jaxlib.mlir import ir

from sdylog.ir.types import rank_of, shape_of
from sdylog.model.rule import NULL_DIM, FactorKind, OpShardingRule, RuleBuilder

__all__ = ["NULL_DIM", "FactorKind", "OpShardingRule", "RuleBuilder", "builder_for", "shape_of",
           "int_attr", "ints_attr", "conv_window", "ConvWindow", "bool_attr", "str_attr", "producer", "producer_name", "users",
           "CONSTANT_OPS", "pointwise", "no_rule", "UnknownOp"]

# Constants: sdy.constant and the ops with MLIR's ConstantLike trait among the
# dialects JAX registers (chlo.constant_like is not one: it depends on its operand).
CONSTANT_OPS = frozenset({"stablehlo.constant", "sdy.constant", "arith.constant", "chlo.constant",
                          "mhlo.constant"})


def builder_for(op) -> RuleBuilder:
    """A builder with the op's operand and result ranks (non-tensors: rank 0)."""
    return RuleBuilder([rank_of(v) for v in op.operands], [rank_of(v) for v in op.results])


# --- attributes ------------------------------------------------------------------
def _attr(op, name: str):
    return op.attributes[name] if name in op.attributes else None


def int_attr(op, name: str, default: int | None = None) -> int | None:
    a = _attr(op, name)
    return default if a is None else ir.IntegerAttr(a).value


def ints_attr(op, name: str) -> list[int] | None:
    """An i64 array attribute (`array<i64: ...>` or a dense elements attribute,
    flattened); None when the op does not carry it."""
    a = _attr(op, name)
    if a is None:
        return None
    if isinstance(a, ir.DenseI64ArrayAttr):
        return list(ir.DenseI64ArrayAttr(a))
    return [int(x) for x in ir.DenseIntElementsAttr(a)]


class ConvWindow(NamedTuple):
    """A convolution's window along its spatial dimensions (i-th entry: the
    i-th of dimension_numbers' spatial dimensions); absent attributes are
    their defaults (1, no padding)."""
    strides: list[int]
    lhs_dilation: list[int]
    rhs_dilation: list[int]
    padding: list[tuple[int, int]]   # (low, high)


def conv_window(op, spatial: int) -> ConvWindow:
    """The window of convolution `op` with `spatial` spatial dimensions."""
    flat = ints_attr(op, "padding")
    return ConvWindow(ints_attr(op, "window_strides") or [1] * spatial,
                      ints_attr(op, "lhs_dilation") or [1] * spatial,
                      ints_attr(op, "rhs_dilation") or [1] * spatial,
                      list(zip(flat[0::2], flat[1::2])) if flat else [(0, 0)] * spatial)


def bool_attr(op, name: str, default: bool = False) -> bool:
    a = _attr(op, name)
    return default if a is None else ir.BoolAttr(a).value


def str_attr(op, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


# --- the neighbourhood of an op ----------------------------------------------------
def producer(value):
    """The op defining `value` (an ir.Operation), None for a block argument."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def producer_name(value) -> str | None:
    p = producer(value)
    return p.name if p is not None else None


def users(op):
    """The ops using any result of `op`."""
    for r in op.results:
        for use in r.uses:
            owner = use.owner
            yield owner.operation if hasattr(owner, "operation") else owner


# --- the generic pointwise rule -------------------------------------------------------
def pointwise(op, conservative: bool = False) -> OpShardingRule | None:
    """Dimension d of every tensor is factor d, sized after the first result.

    Ops whose first result is not a tensor (a token) have no rule.
    """
    if not op.results or not isinstance(op.results[0].type, ir.RankedTensorType):
        return None
    return builder_for(op).add_identity(shape_of(op.results[0])).build()


def no_rule(op, conservative: bool = False) -> None:
    """Ops known to need no rule (constants, control flow handled elsewhere, ...)."""
    return None


class UnknownOp(Exception):
    """The registry neither has a rule for this op nor knows that it needs none."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
