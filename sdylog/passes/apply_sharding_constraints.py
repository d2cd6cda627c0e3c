"""-sdy-apply-sharding-constraints: let a sharding constraint dictate the sharding
of its input where nothing else claims it.

The sharding of a `sdy.sharding_constraint` (or a manual computation's
in-sharding, a constraint on that operand) is copied to its input when the
input has no sharding yet, can carry one, the sharding is fully closed, and
no other constraint or manual computation uses the input with a different
sharding. If the input is a data-flow edge target, the input's uses move to
the constraint instead (so as not to restrict every target of the edge),
keeping unreduced axes on the input itself.

Before that, for the head of a chain of constraints (each but the last used
only by the next), uses of the head's input after the tail in the same block
(other than returns) switch to the tail's result.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.rewrite import (create_op, defining_op, ip_after_value, move_after_value,
                               post_order_ops, single_user, uses)
from sdylog.ir.shardings import (SHARDING_RULE, data_flow_edge_of_target, get_or_create_sharding,
                                 get_sharding, is_fully_closed, mesh_or_ref, per_value,
                                 set_sharding, shardable_value, unreduced_axes, with_unreduced)
from sdylog.oprules import rule_for_op
from sdylog.passes.census import PRESERVED, Invalidated, census

_CONSTRAINT_USERS = ("sdy.sharding_constraint", "sdy.manual_computation")

# What the pass did to the module: made or moved constraints, rewired uses,
# set shardings or sharding rules (census.Invalidated: all it says).
_PLACED, _REWIRED, _SHARDINGS = "placed", "rewired", "shardings"


def _used_with_other_sharding(value, sharding) -> bool:
    for user, index in uses(value):
        if user.name == "sdy.sharding_constraint" and user.attributes["sharding"] != sharding:
            return True
        if user.name == "sdy.manual_computation" and per_value(user.attributes["in_shardings"])[index] != sharding:
            return True
    return False


def _used_by_constraint(value, excluded=None) -> bool:
    return any(u.name in _CONSTRAINT_USERS and (excluded is None or u != excluded) for u, _ in uses(value))


def _should_apply(value, sharding) -> bool:
    return (shardable_value(value) is not None and get_sharding(value) is None
            and is_fully_closed(sharding) and not _used_with_other_sharding(value, sharding))


def _is_edge_target(value) -> bool:
    d = defining_op(value)
    return (d is not None and d.name == "sdy.data_flow_edge") or data_flow_edge_of_target(value) is not None


def _apply(op, value, sharding, constraint_after_value, filename, did: set) -> None:
    if not _should_apply(value, sharding):
        return
    if _is_edge_target(value):
        constraint = constraint_after_value()
        value.replace_all_uses_except(constraint.results[0], constraint)
        did.update((_PLACED, _REWIRED))
        # Unreduced axes do not propagate, so they go on the input itself.
        unreduced = unreduced_axes(sharding)
        if unreduced:
            set_sharding(value, with_unreduced(get_or_create_sharding(value, mesh_or_ref(sharding)), unreduced))
        return
    if SHARDING_RULE not in op.attributes:
        rule = rule_for_op(op, conservative=False, filename=filename)
        if rule is not None:
            op.attributes[SHARDING_RULE] = rule.to_attr()
    set_sharding(value, sharding)
    did.add(_SHARDINGS)


def _chain_tail(head):
    """The last constraint of the chain starting at `head`, if the chain qualifies."""
    value = head.operands[0]
    d = defining_op(value)
    if d is not None and d.name == "sdy.sharding_constraint":
        return None
    if get_sharding(value) is not None or _used_by_constraint(value, excluded=head):
        return None
    tail = head
    while True:
        user = single_user(tail.results[0])
        if user is None or user.name != "sdy.sharding_constraint":
            break
        tail = user
    if tail == head or _used_by_constraint(tail.results[0]):
        return None
    return tail


def _redirect_uses_after_tail(head, tail, did: set) -> None:
    value = head.operands[0]
    tail_block = tail.block
    for user, index in uses(value):
        if (user != head and user.name != "func.return" and user.block == tail_block
                and tail.is_before_in_block(user)):
            user.operands[index] = tail.results[0]
            did.add(_REWIRED)


def _apply_constraint_op(op, filename, did: set) -> None:
    tail = _chain_tail(op)
    if tail is not None:
        _redirect_uses_after_tail(op, tail, did)
    value = op.operands[0]

    def constraint_after_value():
        move_after_value(op, value)
        return op
    _apply(op, value, op.attributes["sharding"], constraint_after_value, filename, did)


def _apply_manual_computation(op, filename, did: set) -> None:
    for i, (operand, sharding) in enumerate(zip(list(op.operands), per_value(op.attributes["in_shardings"]))):
        def constraint_after_value(operand=operand, sharding=sharding):
            return create_op("sdy.sharding_constraint", results=[operand.type], operands=[operand],
                             attributes={"sharding": sharding}, loc=op.location,
                             ip=ip_after_value(operand))
        _apply(op, operand, sharding, constraint_after_value, filename, did)


def run(module: ir.Module, options: dict, ctx):
    for flag in ("debug-sharding-origins", "debug-propagation-edge-sharding"):
        if options.get(flag):
            raise SdylogError(f"-sdy-apply-sharding-constraints: '{flag}' is not supported")
    if not census(module, ctx).has(*_CONSTRAINT_USERS):
        return PRESERVED
    did: set = set()   # what the rewrites did (_PLACED, _REWIRED, _SHARDINGS)
    with module.context:
        for op in post_order_ops(module.operation):
            if op.name == "sdy.sharding_constraint":
                _apply_constraint_op(op, ctx.filename, did)
            elif op.name == "sdy.manual_computation":
                _apply_manual_computation(op, ctx.filename, did)
    if not did:
        return PRESERVED
    # (the census keeps its lists unless constraints were made or moved)
    return Invalidated(frozenset({"sdy.sharding_constraint"}) if _PLACED in did else frozenset(),
                       shardings_only=did == {_SHARDINGS})

