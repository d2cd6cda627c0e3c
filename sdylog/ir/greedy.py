"""MLIR's greedy pattern rewriter (what `-canonicalize` runs), for patterns
written in Python: a worklist of ops, each popped op erased when trivially
dead or else offered to its patterns, until nothing changes.

As MLIR's driver: ops are offered bottom-up (post-order, popped last first)
or top-down (pre-order, popped in program order); constants are
deduplicated and hoisted (its cseConstants); an op a pattern creates,
modifies or makes a user of a replacement is pushed; erasing an op pushes
the producers of its operands that are left with at most one other user;
the whole is repeated (at most `max_iterations` times) while an iteration
changed something. Not done: folding (`fold` hooks of ops: sdy's ops have
none) and region simplification beyond dead ops.
"""
from __future__ import annotations

from collections.abc import Callable

from jaxlib.mlir import ir

from sdylog.ir.op_properties import CONSTANT_LIKE_OPS, may_be_effect_free, would_be_trivially_dead
from sdylog.ir.rewrite import (as_operation, create_op, defining_op, erase_trivially_dead_ops,
                               hoist_and_dedup_constants, op_key, results_of, results_unused, users)
from sdylog.ir.walk import op_list, op_names

# A pattern: (the op it is offered, a rewriter) -> whether it rewrote anything.
Pattern = Callable[[ir.Operation, "Rewriter"], bool]


class _Worklist:
    def __init__(self):
        self.ops: list = []
        self.index: dict = {}    # op_key -> position in ops

    def push(self, op) -> None:
        op = as_operation(op)
        key = op_key(op)
        if key not in self.index:
            self.index[key] = len(self.ops)
            self.ops.append(op)

    def pop(self):
        while self.ops:
            op = self.ops.pop()
            if op is not None:
                del self.index[op_key(op)]
                return op
        return None

    def remove(self, op) -> None:
        i = self.index.pop(op_key(op), None)
        if i is not None:
            self.ops[i] = None


class Rewriter:
    """What patterns change the IR through, so that the driver hears of it;
    `meshes`: the module's meshes (sdylog.ir.shardings.Meshes), for patterns
    that need axis sizes."""

    def __init__(self, worklist: _Worklist, meshes=None):
        self.worklist = worklist
        self.meshes = meshes

    def create(self, name: str, before, results=(), operands=(), attributes=None, loc=None) -> ir.Operation:
        op = create_op(name, results=results, operands=operands, attributes=attributes, loc=loc,
                       ip=ir.InsertionPoint(as_operation(before)))
        self.worklist.push(op)
        return op

    def replace(self, op, new_values) -> None:
        """Replace the op's results by `new_values` (its users are pushed) and erase it."""
        op = as_operation(op)
        for old, new in zip(results_of(op), new_values, strict=True):
            if old == new:
                continue
            for user in users(old):
                self.worklist.push(user)
            old.replace_all_uses_with(new)
        self.erase(op)

    def erase(self, op) -> None:
        op = as_operation(op)
        for value in op.operands:
            producer = defining_op(value)
            if producer is None:
                continue
            others = {op_key(u) for u in users(value)} - {op_key(op)}
            if len(others) <= 1:
                self.worklist.push(producer)
        for nested in op_list(op):
            self.worklist.remove(nested)
        op.erase()


def _trivially_dead(op) -> bool:
    return may_be_effect_free(op.name) and results_unused(op) and would_be_trivially_dead(op)


def apply_greedily(root, patterns: dict[str, list[Pattern]], top_down: bool = True,
                   max_iterations: int = 10, meshes=None, ops_and_names=None, settled: bool = False) -> bool:
    """Rewrite the ops nested in `root` with `patterns` (op name -> patterns,
    tried in order) until none applies; returns whether anything changed.
    `meshes` goes to the patterns (Rewriter.meshes); `ops_and_names`: `root`
    and its nested ops in pre-order with their names, if known (a census').
    `settled`: the caller knows `root` has no trivially dead op and its
    constants in place (a run that changed nothing left it so, and nothing
    changed since): the first iteration does not look for them.

    Each iteration first erases the dead ops and handles the constants, then
    offers the ops that have patterns, in the driver's order. (MLIR's driver
    pops every op, but one with uses and no pattern changes nothing when
    popped, and one that dies later is pushed again by the erasure that
    kills it. The ops with patterns hold no regions, so pre-order filtered
    is post-order filtered.)"""
    root = as_operation(root)
    changed = False
    for _ in range(max_iterations):
        if ops_and_names is None:
            ops = op_list(root)
            ops_and_names = (ops, op_names(ops))
        ops, names = ops_and_names
        ops_and_names = None
        progress = False
        if not settled:
            progress = erase_trivially_dead_ops(root, ops, names) > 0
            if CONSTANT_LIKE_OPS.intersection(names):
                progress |= hoist_and_dedup_constants(root)
        settled = False
        if progress:     # (erased ops must not be touched)
            ops = op_list(root)
            names = op_names(ops)
        worklist = _Worklist()
        for op, name in zip(reversed(ops) if top_down else ops, reversed(names) if top_down else names):
            if name in patterns and op != root:
                worklist.push(op)
        rewriter = Rewriter(worklist, meshes)
        while (op := worklist.pop()) is not None:
            if _trivially_dead(op):
                rewriter.erase(op)
                progress = True
                continue
            for pattern in patterns.get(op.name, ()):
                if pattern(op, rewriter):
                    progress = True
                    break
        changed |= progress
        if not progress:
            break
    return changed
