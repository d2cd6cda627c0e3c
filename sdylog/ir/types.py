"""Shapes and ranks of values and types, the one place that reads them.

Every helper takes a Value or a Type. Shaped types (tensors) have shapes;
anything else (tokens, tuples) has rank 0, shape () and no static shape.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir


def type_of(value_or_type) -> ir.Type:
    return value_or_type.type if isinstance(value_or_type, ir.Value) else value_or_type


def rank_of(value_or_type) -> int:
    """The rank of a ranked shaped type, 0 for anything else."""
    t = type_of(value_or_type)
    return t.rank if isinstance(t, ir.ShapedType) and t.has_rank else 0


def shape_of(value_or_type) -> tuple[int, ...]:
    """The shape of a ranked shaped type (dynamic sizes as MLIR's sentinel);
    () for scalars, unranked types and non-tensors."""
    t = type_of(value_or_type)
    return tuple(t.shape) if isinstance(t, ir.ShapedType) and t.has_rank else ()


def num_elements(value_or_type) -> int:
    """The element count of a statically shaped type (1 for a scalar)."""
    return math.prod(shape_of(value_or_type))


def is_shaped(value_or_type) -> bool:
    """A shaped type (a tensor, ranked or not), not a token or tuple."""
    return isinstance(type_of(value_or_type), ir.ShapedType)


def static_shape(value_or_type) -> tuple[int, ...] | None:
    """The shape of a statically shaped type, None otherwise."""
    t = type_of(value_or_type)
    if not isinstance(t, ir.ShapedType) or not t.has_static_shape:
        return None
    return tuple(t.shape)


def is_static_shaped(value_or_type) -> bool:
    """A shaped type with a known rank and no dynamic dimension (not a token)."""
    t = type_of(value_or_type)
    return isinstance(t, ir.ShapedType) and t.has_static_shape


def is_tensor(value_or_type) -> bool:
    """A ranked tensor."""
    return isinstance(type_of(value_or_type), ir.RankedTensorType)


def is_scalar(value_or_type) -> bool:
    """A ranked tensor of rank 0."""
    t = type_of(value_or_type)
    return isinstance(t, ir.ShapedType) and t.has_rank and t.rank == 0


def unpropagatable_type_error(value_or_type) -> str | None:
    """Why Shardy's propagation rejects a result of this type (tuples, and
    shaped types without a static shape), or None when it does not."""
    t = type_of(value_or_type)
    if isinstance(t, ir.TupleType):
        return f"Shardy propagation doesn't support tuples: {t}"
    if isinstance(t, ir.ShapedType) and not t.has_static_shape:
        return f"Shardy propagation only supports ranked tensors with a static shape. type: {t}"
    return None


def element_type_text(t: ir.Type) -> str:
    """A shaped type's element type as MLIR prints it (`f32`); any other type whole."""
    return str(ir.ShapedType(t).element_type) if isinstance(t, ir.ShapedType) else str(t)


def element_bytes(value_or_type) -> int:
    """Bytes one element of a shaped type takes (as XLA stores it: i1 in a
    byte, index as 64 bits, complex as two of its parts); 0 for non-tensors."""
    t = type_of(value_or_type)
    if not isinstance(t, ir.ShapedType):
        return 0
    return _bytes_of_element(t.element_type)


def _bytes_of_element(t) -> int:
    t = t.maybe_downcast() if hasattr(t, "maybe_downcast") else t
    if isinstance(t, ir.ComplexType):
        return 2 * _bytes_of_element(t.element_type)
    if isinstance(t, ir.IndexType):
        return 8
    width = getattr(t, "width", None)
    if width is None:
        raise ValueError(f"no size known for element type {t}")
    return (width + 7) // 8
