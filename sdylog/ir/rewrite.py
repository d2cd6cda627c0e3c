"""Small IR-mutation helpers over jaxlib's MLIR bindings: values and their
owners, insertion points, replacing and moving ops, inlining regions, and
warnings.

The bindings hand out a new Python object for every access; equality follows
the underlying IR object, but an op's hash covers its operands and attributes
too: key dicts by `op_key(op)` where the IR changes meanwhile.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import format_location
from sdylog.ir.walk import op_list, op_names


def as_operation(op) -> ir.Operation:
    return op.operation if hasattr(op, "operation") else op


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_OPERATION_CAPSULE = b"jaxlib.mlir.ir.Operation._CAPIPtr"


def op_key(op) -> int:
    """A number naming the op for as long as it lives, to key dicts and sets
    by while the IR changes: the bindings hash an op with its operands and
    attributes, so an op used as a key is lost once either changes."""
    return _capsule_pointer(as_operation(op)._CAPIPtr, _OPERATION_CAPSULE)


# --- walking -------------------------------------------------------------------
def post_order_ops(root) -> list[ir.Operation]:
    """`root` and every op nested in it, each after the ops nested in it (MLIR's
    default walk order)."""
    return op_list(root, post_order=True)


# --- values --------------------------------------------------------------------
def defining_op(value) -> ir.Operation | None:
    """The op that produces `value`, None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else as_operation(owner)


def owning_op(value) -> ir.Operation:
    """The defining op, or for a block argument the op whose region holds the block."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return as_operation(owner.owner)
    return as_operation(owner)


def value_key(value) -> tuple:
    """What a value is beyond its handle: ("arg" or "result", its op's name,
    its number there, its type, its op's location). The bindings compare
    values by address: once a pass erased an op, a value it makes may have
    an erased value's address, and be taken for it."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        op = as_operation(owner.owner)
        return ("arg", op.name, ir.BlockArgument(value).arg_number, value.type, op.location)
    op = as_operation(owner)
    return ("result", op.name, ir.OpResult(value).result_number, value.type, op.location)


def result_number(value) -> int:
    return ir.OpResult(value).result_number


def uses(value) -> list[tuple[ir.Operation, int]]:
    """(user op, operand number) for every use, in use-list order."""
    return [(as_operation(u.owner), u.operand_number) for u in value.uses]


def users(value) -> list[ir.Operation]:
    return [op for op, _ in uses(value)]


def single_user(value) -> ir.Operation | None:
    """The user when `value` has exactly one use (the first two uses read,
    no more: a value may have hundreds)."""
    it = iter(value.uses)
    first = next(it, None)
    if first is None or next(it, None) is not None:
        return None
    return as_operation(first.owner)


def has_no_uses(value) -> bool:
    return next(iter(value.uses), None) is None


# --- insertion points and moving ---------------------------------------------
def ip_after_value(value) -> ir.InsertionPoint:
    """Right after the op defining `value`, or at the start of its block."""
    op = defining_op(value)
    if op is None:
        return ir.InsertionPoint.at_block_begin(value.owner)
    return ip_after_op(op)


def ip_after_op(op) -> ir.InsertionPoint:
    """Right after `op`: ops inserted there one by one keep their order."""
    return ir.InsertionPoint.after(as_operation(op))


def move_after_value(op, value) -> None:
    """Move `op` right after the definition of `value` (start of block for an argument)."""
    op = as_operation(op)
    d = defining_op(value)
    if d is not None:
        op.move_after(d)
        return
    block = value.owner
    first = next(iter(block.operations), None)
    if first is None:
        op.detach_from_parent()
        ir.InsertionPoint(block).insert(op)
    elif as_operation(first) != op:
        op.move_before(first)


def replace_op(op, new_values) -> None:
    """Replace every use of the op's results with `new_values`, then erase it."""
    op = as_operation(op)
    results = op.results
    if len(results) == 1:   # most ops: `op.result` costs less than iterating `op.results`
        (new,) = new_values
        old = op.result
        if old == new:
            op.erase()
        else:
            replace_one_result(op, old, new)
        return
    for old, new in zip(results, new_values, strict=True):
        if old != new:
            old.replace_all_uses_with(new)
    op.erase()


def replace_one_result(op, result, new) -> None:
    """replace_op for an op with one result, `result`, which the caller has
    read already (each read goes through the bindings), and `new` another value."""
    result.replace_all_uses_with(new)
    op.erase()


def create_op(name: str, results=(), operands=(), attributes=None, regions: int = 0,
              loc=None, ip=None) -> ir.Operation:
    """A generic op built with `ir.Operation.create` at `ip` (detached if ip is False)."""
    # (lists and dicts go as they are: the bindings copy what they read; ops are many)
    return ir.Operation.create(name, results=results if type(results) is list else list(results),
                               operands=operands if type(operands) is list else list(operands),
                               attributes=attributes if type(attributes) is dict else dict(attributes or {}),
                               regions=regions, loc=loc, ip=ip)


def attributes_of(op) -> dict:
    """Every attribute of the op (inherent and discardable), by name."""
    return dict(as_operation(op).attributes.items())


def splat_of_type(splat: ir.DenseElementsAttr, t: ir.Type) -> ir.Attribute:
    """The single value of the splat attribute `splat` spread over the tensor
    type `t` (same element type, another shape)."""
    value = splat.get_splat_value()
    if isinstance(value, ir.ArrayAttr):  # complex: [re, im], which get_splat does not take
        part = ir.FloatType(ir.ComplexType(ir.ShapedType(t).element_type).element_type)
        dtype = {32: np.complex64, 64: np.complex128}[part.width]
        re, im = (ir.FloatAttr(x).value for x in value)
        return ir.DenseElementsAttr.get(np.array([complex(re, im)], dtype), type=t)
    return ir.DenseElementsAttr.get_splat(t, value)


# Inherent attributes (the op's own, as opposed to discardable ones like
# `sdy.sharding`) of the ops whose discardable attributes passes carry over.
INHERENT_ATTRIBUTES = {
    "func.call": frozenset({"callee", "arg_attrs", "res_attrs", "no_inline"}),
    "sdy.named_computation": frozenset({"name", "in_shardings", "out_shardings"}),
    "sdy.sharding_constraint": frozenset({"sharding"}),
    "sdy.reshard": frozenset({"sharding"}),
}


def discardable_attributes(op) -> dict:
    """The op's attributes that are not inherent to it (MLIR's discardable ones)."""
    op = as_operation(op)
    inherent = INHERENT_ATTRIBUTES.get(op.name, frozenset())
    return {k: v for k, v in op.attributes.items() if k not in inherent}


def replace_terminator(block: ir.Block, new_name: str) -> ir.Operation:
    """Replace the block's terminator with `new_name` (same operands and location)."""
    old = as_operation(block.operations[-1])
    new = create_op(new_name, operands=list(old.operands), loc=old.location,
                    ip=ir.InsertionPoint(old))
    old.erase()
    return new


def move_region_blocks(src: ir.Region, dst: ir.Region) -> None:
    """Move every block of `src` to the end of `dst` (MLIR's takeBody when dst is empty)."""
    for block in list(src.blocks):
        block.append_to(dst)


def erase_trivially_dead_ops(root, ops: list | None = None, names: list | None = None) -> int:
    """Erase, until none is left, ops whose results are unused and that have no
    memory effect (what MLIR's greedy rewriter does before any pattern).
    Returns how many ops were erased. `ops`: `root` and the ops nested in it
    in pre-order (e.g. a census'), read by the first sweep instead of a walk
    (in reverse pre-order too, users come before their producers); `names`:
    their names, list for list, if known."""
    from sdylog.ir.op_properties import may_be_effect_free, would_be_trivially_dead

    root = as_operation(root)
    erased = 0
    effect_free: dict = {}   # op name -> may_be_effect_free (names repeat: each is asked once)
    while True:
        sweep = 0
        # Users come before their producers in reverse post order, so one sweep
        # erases whole dead chains. An op with regions takes its nested ops
        # with it: start a new sweep after erasing one. (`root` comes last in
        # post order, first in pre-order: it is left out.)
        if ops is None:
            candidates = ((op, op.name) for op in reversed(post_order_ops(root)[:-1]))
        else:
            if names is None:
                names = op_names(ops)
            candidates = zip(reversed(ops[1:]), reversed(names[1:]), strict=True)
            ops = names = None
        for op, name in candidates:
            free = effect_free.get(name)
            if free is None:
                free = effect_free[name] = may_be_effect_free(name)
            if not free or not results_unused(op) or not would_be_trivially_dead(op):
                continue
            nested = bool(op.regions)
            op.erase()
            sweep += 1
            if nested:
                break
        erased += sweep
        if sweep == 0:
            return erased


def results_of(op) -> list:
    """The op's results (`op.result` for one: listing `op.results` costs
    three times as much)."""
    results = op.results
    return [op.result] if len(results) == 1 else list(results)


def results_unused(op) -> bool:
    results = op.results
    if len(results) == 1:   # most ops: `op.result` costs half as much as iterating `op.results`
        return next(iter(op.result.uses), None) is None   # (has_no_uses, without a call: ops are many)
    return all(has_no_uses(r) for r in results)


# Ops MLIR's greedy rewriter unique as constants (the ConstantLike trait).
_CONSTANT_LIKE = frozenset({"stablehlo.constant", "chlo.constant", "arith.constant"})


def hoist_and_dedup_constants(root) -> bool:
    """What MLIR's greedy rewriter does to constants before applying patterns
    (its `cseConstants`): in pre order, a constant equal (dialect, value, type)
    to one already seen in the same isolated-from-above region is replaced by
    it; any other constant moves to the front of that region's entry block,
    unless it is there already (first, or right after such a hoisted constant).
    Returns whether it changed anything."""
    root = as_operation(root)
    changed = False
    seen: dict = {}
    hoisted: set = set()
    stack = [as_operation(inner) for region in reversed(list(root.regions))
             for block in reversed(list(region.blocks)) for inner in reversed(list(block.operations))]
    while stack:
        op = stack.pop()
        stack.extend(as_operation(inner) for region in reversed(list(op.regions))
                     for block in reversed(list(region.blocks)) for inner in reversed(list(block.operations)))
        if op.name not in _CONSTANT_LIKE:
            continue
        scope_op, region_index = _isolated_scope(op, root)
        key = (scope_op, region_index, op.name.split(".")[0], op.attributes["value"], op.results[0].type)
        first = seen.get(key)
        if first is not None:
            replace_op(op, first.results)
            changed = True
            continue
        entry = scope_op.regions[region_index].blocks[0]
        front = as_operation(next(iter(entry.operations)))
        if op.block != entry or (front != op and _previous_op(op) not in hoisted):
            op.move_before(front)
            changed = True
        seen[key] = op
        hoisted.add(op)
    return changed


def _isolated_scope(op, root):
    """(ancestor op, region index): the region, holding `op`, of the nearest
    ancestor that is isolated from above (or `root`)."""
    region_holder = op.parent
    child = op
    while True:
        holder = as_operation(region_holder)
        if holder == root or holder.name in _ISOLATED_FROM_ABOVE:
            for i, region in enumerate(holder.regions):
                if region == child.block.region:
                    return holder, i
        child, region_holder = holder, holder.parent


_ISOLATED_FROM_ABOVE = frozenset({"func.func", "builtin.module", "sdy.named_computation",
                                  "sdy.manual_computation", "stablehlo.async_start"})


def _previous_op(op):
    prev = None
    for other in op.block.operations:
        other = as_operation(other)
        if other == op:
            return prev
        prev = other
    return None


# --- diagnostics ---------------------------------------------------------------
def emit_warning(op_or_loc, message: str, filename: str | None = None) -> None:
    """A `file:line:col: warning: message` line on stderr, as MLIR prints warnings."""
    _emit(op_or_loc, "warning", message, filename)


def emit_note(op_or_loc, message: str, filename: str | None = None) -> None:
    """A `file:line:col: note: message` line on stderr: something the user
    should know that is not wrong."""
    _emit(op_or_loc, "note", message, filename)


def _emit(op_or_loc, severity: str, message: str, filename: str | None) -> None:
    where = format_location(op_or_loc, filename)   # (an op: its place, else its caller's)
    sys.stderr.write(f"{where}: {severity}: {message}\n" if where else f"{severity}: {message}\n")
