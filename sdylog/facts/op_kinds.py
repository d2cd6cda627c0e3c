"""What the facts' walk (extract.py) reads of each kind of op: a table by op
name, as Shardy's registry finds an op's sharding rule by its name.

Most ops (stablehlo.add, dot_general, ...) have an op row, operands,
results, maybe a `sdy.sharding` list and a rule: extract.py reads those of
every op. The few kinds with more have their rows written by the small
functions of two tables, each called with the extractor and the op read
(extract._OpRead):

* SHARDING_READERS: the shardings an op holds other than its `sdy.sharding`
  list (an attribute of its own, a manual computation's in and out
  shardings, a named or manual computation's edgeless values'), which
  re-reading shardings (extract.read_shardings) reads again;
* KIND_FACTS: the rows of its kind (a constraint, a group, a call, ...).

OpKind holds what is decided once per name.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.op_properties import custom_call_has_side_effect, is_elementwise, may_be_effect_free
from sdylog.ir.shardings import OWN_SHARDING_ATTR as IR_OWN_SHARDING_ATTR
from sdylog.ir.shardings import (DATA_FLOW_OPS, block_arg_owner_shardings, block_arg_owners,
                                 data_flow_edge_of_owner, result_owner_shardings, result_owners)
from sdylog.model.sharding import TensorSharding, sharding_per_value
from sdylog.oprules.registry import ATTR_KEY, NO_RULE, TYPE_KEY, key_kind

# Ops whose results carry data unchanged from their operands / regions: data
# flows through them along data-flow edges, never through a sharding rule.
FLOW_OPS = DATA_FLOW_OPS | {"func.call", "stablehlo.if"}
# Ops whose results' (and regions' arguments') tensors are found through their data-flow edges.
TENSOR_OPS = DATA_FLOW_OPS | {"stablehlo.async_start"}
# Ops with a sharding of their own: the attribute holding it (an sdy
# collective's result has its `out_sharding`): the IR's table
# (sdylog/ir/shardings.py), and a function's data-flow edge, whose sharding
# the facts read as the IR's get_sharding does not.
OWN_SHARDING_ATTR = {**IR_OWN_SHARDING_ATTR, "sdy.func_data_flow_edge": "sharding"}
_OFFLOAD_TARGETS = ("MoveToHost", "MoveToDevice")
_DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")   # sdy's PropagationDirection enum


@dataclass(frozen=True)
class OpKind:
    """What the walk reads of the ops of one name (op_kind)."""
    effects: bool                  # a memory effect of its own: an `effects` op_trait (a
                                   # custom call's has_side_effect is read by KIND_FACTS)
    may_have_regions: bool         # False when its op definition says it has none (stablehlo.add)
    elementwise: bool | None       # an `elementwise` op_trait; None: asked of each op
    rule: int | None               # key_kind of its rule; None: no rule rows (FLOW_OPS)
    tensors_by_edge: bool          # TENSOR_OPS: its values' tensors are found through data-flow edges
    shardings: Callable | None     # SHARDING_READERS' entry
    kind_facts: Callable | None    # KIND_FACTS' entry
    # No regions and no rows of its kind, element-wise or not whatever its
    # types, its rule (if any) keyed by its types and attributes: extract.py
    # reads such an op inline.
    common: bool


def op_kind(op, name: str) -> OpKind:
    """The OpKind of ops named `name` (`op` one of them): made once per name
    for the process (it reads the name and the op's class, which the name
    gives), as every extraction and re-read asks it again. (An extractor
    also keeps the OpKinds of the names it meets, extract._Extractor._kinds:
    that is its record of the names met, op_names, not a second cache.)"""
    kind = _KINDS.get(name)
    if kind is None:
        kind = _KINDS[name] = _op_kind(op, name)
    return kind


_KINDS: dict[str, OpKind] = {}


def _op_kind(op, name: str) -> OpKind:
    # (_ODS_REGIONS is (count, fixed) on the generated op classes; an unregistered op has none)
    regions = getattr(type(op.opview), "_ODS_REGIONS", None) != (0, True)
    # (a bitcast-convert is element-wise when it keeps the shape: is_elementwise reads its types)
    elementwise = None if name == "stablehlo.bitcast_convert" else is_elementwise(None, name)
    rule = None if name in FLOW_OPS else key_kind(name)
    shardings, kind_facts = SHARDING_READERS.get(name), KIND_FACTS.get(name)
    return OpKind(effects=not may_be_effect_free(name), may_have_regions=regions, elementwise=elementwise,
                  rule=rule, tensors_by_edge=name in TENSOR_OPS, shardings=shardings, kind_facts=kind_facts,
                  common=(not regions and shardings is None and kind_facts is None and name not in TENSOR_OPS
                          and elementwise is not None and rule in (NO_RULE, TYPE_KEY, ATTR_KEY)))


def flow_values(op) -> list:
    """The results, then the regions' block arguments, of an op in TENSOR_OPS."""
    values = list(op.results)
    for region in op.regions:
        for block in region.blocks:
            values += block.arguments
    return values


# ---------------------------------------------------------------- shardings
def _own_sharding(x, read, attrs) -> None:
    """An op of OWN_SHARDING_ATTR: its result's sharding."""
    sharding = attrs.get(OWN_SHARDING_ATTR[read.name])
    if sharding is not None:
        x.facts.add("value_sharding", read.results[0], x.add_sharding(TensorSharding.from_attr(sharding)))


def _manual_shardings(x, read, attrs) -> None:
    """A manual computation's in and out shardings, then its edgeless values'."""
    for i, s in enumerate(sharding_per_value(attrs["in_shardings"])):
        x.facts.add("manual_in_sharding", read.op_id, i, x.add_sharding(s))
    for i, s in enumerate(sharding_per_value(attrs["out_shardings"])):
        x.facts.add("manual_out_sharding", read.op_id, i, x.add_sharding(s))
    _edgeless_shardings(x, read, attrs)


def _edgeless_shardings(x, read, attrs) -> None:
    """A named or manual computation's results, then its body's arguments,
    that have no data-flow edge: their sharding is the op's out / in
    sharding (the in sharding as seen inside it), read once for the op."""
    op = read.op
    for owners, shardings in ((result_owners(op), result_owner_shardings(op)),
                              (block_arg_owners(op), block_arg_owner_shardings(op))):
        for value, s in zip(owners, shardings):
            if data_flow_edge_of_owner(value) is None:   # (an edge holds the sharding: the edge op's row)
                x.facts.add("value_sharding", x.value_id(value, read.func), x.add_sharding(TensorSharding.from_attr(s)))


SHARDING_READERS = {
    **dict.fromkeys(OWN_SHARDING_ATTR, _own_sharding),
    # (the other ops of TENSOR_OPS, while, case, barrier, async, hold their
    # edgeless results' shardings in their `sdy.sharding` list, read for every
    # op: extract.add_list_shardings; their block arguments have none of their own)
    "sdy.named_computation": _edgeless_shardings,
    "sdy.manual_computation": _manual_shardings,
}


# ---------------------------------------------------------------- kind facts
def _custom_call(x, read, attrs) -> None:
    if ir.StringAttr(attrs["call_target_name"]).value in _OFFLOAD_TARGETS:
        x.facts.add("op_trait", read.op_id, "offload")
    if custom_call_has_side_effect(attrs):
        x.facts.add("op_trait", read.op_id, "effects")


def _data_flow_edge(x, read, attrs) -> None:
    x.add_edge_sources(read.op, read.op_id, read.func)


def _func_data_flow_edge(x, read, attrs) -> None:
    x.func_edges.append((read.op_id, read.op, read.func))   # (their sources: add_func_edges, after every function)


def _sharding_constraint(x, read, attrs) -> None:
    x.facts.add("sharding_constraint", read.op_id)


def _sharding_group(x, read, attrs) -> None:
    x.facts.add("sharding_group", read.operands[0], ir.IntegerAttr(attrs["group_id"]).value)


def _propagation_barrier(x, read, attrs) -> None:
    x.facts.add("propagation_barrier", read.op_id, direction_name(attrs["allowed_direction"]))


def _call(x, read, attrs) -> None:
    x.facts.add("call", read.op_id, ir.FlatSymbolRefAttr(attrs["callee"]).value)


def _manual_computation(x, read, attrs) -> None:
    manual = sdy.ManualAxesAttr(attrs["manual_axes"])
    for i in range(len(manual)):
        x.facts.add("manual_axis", read.op_id, manual[i])


KIND_FACTS = {
    "stablehlo.custom_call": _custom_call,
    "sdy.data_flow_edge": _data_flow_edge,
    "sdy.func_data_flow_edge": _func_data_flow_edge,
    "sdy.sharding_constraint": _sharding_constraint,
    "sdy.sharding_group": _sharding_group,
    "sdy.propagation_barrier": _propagation_barrier,
    "func.call": _call,
    "sdy.manual_computation": _manual_computation,
}


def direction_name(attr) -> str:
    """A propagation barrier's allowed_direction (an i32 enum, or its printed name)."""
    if isinstance(attr, ir.IntegerAttr):
        return _DIRECTIONS[attr.value]
    text = str(attr)
    for name in _DIRECTIONS:
        if name in text.upper():
            return name
    return text
