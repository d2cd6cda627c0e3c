"""What every propagation pass does to sharding groups before it starts
(Shardy's ShardingGroupMap::syncGroupMemberShardings).

A group's members share one sharding during propagation (rules/propagation/
tensors.dl: they are one tensor, which starts with the first member's
sharding that says something). When two members start with *different*
shardings (neither absent nor fully open), no sharding can honour both:
Shardy warns, and puts a fully open `sdy.sharding_constraint` after every
member, which takes the member's place in the group and in all its uses. The
members keep their own shardings; the new constraints start open and are
what the group shares, so propagation settles the group's sharding.

Only the IR changes here: the shardings the constraints get are the rules'.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.rewrite import create_op, emit_warning, ip_after_value, owning_op
from sdylog.ir.shardings import fully_open_like, get_sharding
from sdylog.passes.census import PRESERVED, Invalidated, census
from sdylog.passes.sharding_group_import import group_id


def _says_something(sharding) -> bool:
    """Some dimension has axes or is closed (the opposite of Shardy's
    isFullyReplicatedAndOpen)."""
    return any(len(d.axes) or d.is_closed
               for d in map(sdy.DimensionShardingAttr, sdy.TensorShardingAttr(sharding).dimension_shardings))


def _groups(module: ir.Module, ctx) -> dict[int, list]:
    """Group id -> the values of its `sdy.sharding_group` ops, in walk order."""
    groups: dict[int, list] = {}
    for op in census(module, ctx).ops("sdy.sharding_group"):
        groups.setdefault(group_id(op), []).append(op.operands[0])
    return groups


def _first_conflict(members: list):
    """The first member's sharding that says something, if another member's
    differs from it; else None."""
    first = None
    for v in members:
        s = get_sharding(v)
        if s is None or not _says_something(s):
            continue
        if first is None:
            first = s
        elif s != first:
            return first
    return None


def open_conflicting_groups(module: ir.Module, ctx):
    """Give each group whose members start with different shardings an open
    sharding constraint after every member, in the member's place. Returns
    what it did to the module's ops (census.py)."""
    filename = getattr(ctx, "filename", None)
    created = False
    with module.context:
        for gid, members in sorted(_groups(module, ctx).items()):
            if len(members) < 2:
                continue
            sharding = _first_conflict(members)
            if sharding is None:
                continue
            emit_warning(owning_op(members[0]),
                         f"The initial operand shardings on the sharding groups of groupID: {gid} do not match. "
                         "Inserting an open sharding constraint to all constrained values. This can be caused "
                         "when shardings from different values are grouped (e.g. from jax.shard_alike) but have "
                         "separate inconsistent sharding constraints on them.", filename)
            for v in members:
                c = create_op("sdy.sharding_constraint", results=[v.type], operands=[v],
                              attributes={"sharding": fully_open_like(sharding)}, loc=v.location,
                              ip=ip_after_value(v))
                v.replace_all_uses_except(c.result, c)
                created = True
    return Invalidated(frozenset({"sdy.sharding_constraint"})) if created else PRESERVED
