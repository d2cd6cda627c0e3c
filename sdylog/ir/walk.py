"""Plain iteration over ops and values (MLIR's walk cannot carry Python exceptions)."""
from __future__ import annotations

from collections.abc import Iterator

from jaxlib.mlir import ir


def walk_ops(op) -> Iterator[ir.Operation]:
    """`op` and every op nested in it, pre-order (parents before children, in program order)."""
    op = op.operation if hasattr(op, "operation") else op
    stack = [op]
    while stack:
        cur = stack.pop()
        yield cur
        children = [inner.operation for region in cur.regions for block in region.blocks
                    for inner in block.operations]
        stack.extend(reversed(children))


def shape_of(value) -> tuple[int, ...]:
    """The static shape of a ranked tensor value; () for scalars and non-tensors."""
    t = value.type
    return tuple(t.shape) if isinstance(t, ir.RankedTensorType) else ()


def rank_of(value) -> int:
    t = value.type
    return t.rank if isinstance(t, ir.RankedTensorType) else 0


def is_tensor(value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def func_ops(module: ir.Module) -> list:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def symbol_name(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value
