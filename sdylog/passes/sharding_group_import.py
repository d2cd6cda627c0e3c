"""-sdy-sharding-group-import: validate sharding groups, merge overlapping ones
and renumber them 0..N-1.

Groups that share a tensor are one group (transitively). Every value of a
group must have the same shape and the same enclosing manual computation (or
none). After merging, a group's new id follows the order in which its first
id was seen (walking the groups of each tensor in order of the tensor's
first group op); repeated groups on the same tensor are erased.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import as_operation
from sdylog.ir.types import shape_of
from sdylog.passes.census import PRESERVED, census


def group_id(op) -> int:
    """A `sdy.sharding_group` op's group id."""
    return ir.IntegerAttr(op.attributes["group_id"]).value


def _enclosing_manual_computation(op):
    parent = op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent.name == "sdy.manual_computation":
            return parent
        parent = parent.parent
    return None


class _Classes:
    """Union-find that remembers insertion order; a union keeps the first set's leader
    (LLVM's EquivalenceClasses, which Shardy uses)."""

    def __init__(self):
        self.members: list[int] = []
        self.leader: dict[int, int] = {}

    def _insert(self, v: int) -> int:
        if v not in self.leader:
            self.leader[v] = v
            self.members.append(v)
        return self.leader[v]

    def union(self, a: int, b: int) -> None:
        la, lb = self._insert(a), self._insert(b)
        if la != lb:
            for m, lead in self.leader.items():
                if lead == lb:
                    self.leader[m] = la

    def new_ids(self) -> dict[int, int]:
        """Old id -> new id: leaders numbered in insertion order."""
        numbering = {}
        for m in self.members:
            if self.leader[m] == m:
                numbering[m] = len(numbering)
        return {m: numbering[self.leader[m]] for m in self.members}


def validate(groups, filename) -> None:
    parents: dict[int, object] = {}
    shapes: dict[int, tuple] = {}
    for op in groups:
        gid = group_id(op)
        parent = _enclosing_manual_computation(op)
        if gid in parents:
            seen = parents[gid]
            if (seen is None) != (parent is None) or (seen is not None and seen != parent):
                raise error_at(op, "'sdy.sharding_group' op ShardingGroupOps values cannot cross "
                               f"ManualComputationOp boundaries for groupId: {gid}", filename)
        else:
            parents[gid] = parent
        shape = shape_of(op.operands[0])
        if shapes.setdefault(gid, shape) != shape:
            raise error_at(op, "'sdy.sharding_group' op ShardingGroupOps values must have the same "
                           f"shape for groupId: {gid}", filename)


def run(module: ir.Module, options: dict, ctx):
    groups = census(module, ctx).ops("sdy.sharding_group")
    if not groups:
        return PRESERVED
    with module.context:
        validate(groups, ctx.filename)
        by_tensor: dict = {}
        for op in groups:
            by_tensor.setdefault(op.operands[0], []).append(op)
        classes = _Classes()
        for ops in by_tensor.values():
            canonical = group_id(ops[0])
            for op in ops:
                classes.union(canonical, group_id(op))
        new_ids = classes.new_ids()
        i64 = ir.IntegerType.get_signless(64)
        by_new_id: dict[int, list] = {}
        for ops in by_tensor.values():
            for op in ops:
                new = new_ids[group_id(op)]
                op.attributes["group_id"] = ir.IntegerAttr.get(i64, new)
                by_new_id.setdefault(new, []).append(op)
        for new in sorted(by_new_id):
            seen = set()
            for op in by_new_id[new]:
                if op.operands[0] in seen:
                    op.erase()
                else:
                    seen.add(op.operands[0])

