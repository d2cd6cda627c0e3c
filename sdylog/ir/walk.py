"""Plain iteration over ops and values."""
from __future__ import annotations

from collections.abc import Iterator
from sys import intern

from jaxlib.mlir import ir


_ADVANCE = ir.WalkResult.ADVANCE
_SKIP = ir.WalkResult.SKIP
_ORDERS = {False: ir.WalkOrder.PRE_ORDER, True: ir.WalkOrder.POST_ORDER}


def walk_ops(op) -> Iterator[ir.Operation]:
    """`op` and every op nested in it, pre-order (parents before children, in
    program order), as they are when the walk starts: ops added meanwhile are
    not visited, and ops erased meanwhile (with those nested in them) must not
    be touched again."""
    return iter(op_list(op))


def op_list(op, post_order: bool = False) -> list[ir.Operation]:
    """walk_ops as a list (with `post_order`, each op after the ops nested in
    it). MLIR's own walk collects the ops (3x faster than reading regions and
    blocks from Python); the callback only appends, so no Python exception
    has to cross it."""
    op = op.operation if hasattr(op, "operation") else op
    out: list[ir.Operation] = []
    append = out.append

    def visit(o):
        append(o)
        return _ADVANCE

    op.walk(visit, _ORDERS[post_order])
    return out


def op_names(ops) -> list[str]:
    """The names of these ops, list for list, one string object per distinct
    name (the bindings make a new string at each read: the lists and fact rows
    that keep the names share these)."""
    return [intern(op.name) for op in ops]


def listed(items) -> list:
    """A list of the bindings' sequence `items` (an op's operands, results, ...),
    read by index: iterating it ends in an IndexError, which costs more than
    the reads (an op's operands: 2x)."""
    return [items[i] for i in range(len(items))]


def nested_ops_not_entering(op, name: str) -> list[ir.Operation]:
    """The ops nested in `op` (not `op` itself), pre-order as op_list; an op
    named `name` is listed but its regions are not entered (MLIR's walk skips
    them)."""
    op = op.operation if hasattr(op, "operation") else op
    out: list[ir.Operation] = []
    append = out.append
    root = True

    def visit(o):
        nonlocal root
        if root:   # the walk starts at `op` itself
            root = False
            return _ADVANCE
        append(o)
        return _SKIP if o.name == name else _ADVANCE

    op.walk(visit, _ORDERS[False])
    return out


def func_ops(module: ir.Module) -> list:
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def symbol_name(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value
