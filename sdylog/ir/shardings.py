"""Where shardings live in the IR, read and written the way Shardy does.

A value's sharding sits in different places depending on who owns the value:
a function argument's in `arg_attrs`, a `sdy.sharding_constraint`'s in its
`sharding`, a data-flow op's (while, case, optimization barrier, named and
manual computation) in the op's owner shardings, any other op result's in
the op's `sdy.sharding` per-value list. `get_sharding` / `set_sharding`
hide that; `walk_shardings` / `transform_shardings` visit every sharding in
a module once, in the order Shardy's sharding walker does.

Shardings are `#sdy.sharding` attributes (ir.Attribute); None means "none".
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy, stablehlo

from sdylog.ir.rewrite import (as_operation, owning_op, result_number,
                               single_user)
from sdylog.ir.types import rank_of
from sdylog.ir.walk import listed, op_list
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import DimSharding, TensorSharding

SHARDING = "sdy.sharding"
SHARDING_RULE = "sdy.sharding_rule"
FUNC_MANUAL_AXES = "sdy.func_manual_axes"
EXECUTION_THREAD = "execution_thread"

# How many results a function of attributes keeps (lru_cache): attributes
# are uniqued per context, and the passes of a pipeline, and every run of a
# process, ask the same few questions of the same few attributes.
_KEPT = 4096

COLLECTIVE_OPS = frozenset(f"sdy.{n}" for n in (
    "all_gather", "all_slice", "all_to_all", "collective_permute", "all_reduce",
    "reduce_scatter", "sharded_to_unreduced", "replicated_to_unreduced"))


# --- sharding attributes --------------------------------------------------------
def per_value(attr) -> list:
    """The shardings of a `#sdy.sharding_per_value` (as attributes)."""
    return list(sdy.TensorShardingPerValueAttr(attr).shardings)


def per_value_attr(shardings) -> ir.Attribute:
    return sdy.TensorShardingPerValueAttr.get(list(shardings))


def mesh_or_ref(sharding) -> ir.Attribute:
    return sdy.TensorShardingAttr(sharding).mesh_or_ref


def mesh_name(sharding) -> str | None:
    m = mesh_or_ref(sharding)
    return m.value if isinstance(m, ir.FlatSymbolRefAttr) else None


def fully_replicated(mesh_ref, rank: int, closed: bool) -> ir.Attribute:
    """`<mesh, [{}, ...]>` (closed) or `<mesh, [{?}, ...]>` (open) on a mesh
    reference or inlined mesh attribute."""
    dim = sdy.DimensionShardingAttr.get([], closed)
    return sdy.TensorShardingAttr.get(mesh_ref, [dim] * rank, [], [])


def fully_open_like(sharding) -> ir.Attribute:
    s = sdy.TensorShardingAttr(sharding)
    return fully_replicated(s.mesh_or_ref, len(s.dimension_shardings), closed=False)


def fully_closed_like(sharding) -> ir.Attribute:
    s = sdy.TensorShardingAttr(sharding)
    return fully_replicated(s.mesh_or_ref, len(s.dimension_shardings), closed=True)


def open_shardings_with(types, index: int, sharding) -> list:
    """Fully open shardings for `types` on the mesh of `sharding`, with
    `sharding` itself at `index`."""
    ref = mesh_or_ref(sharding)
    out = [fully_replicated(ref, rank_of(t), closed=False) for t in types]
    out[index] = sharding
    return out


def erase_module_meshes(module, mesh_ops) -> bool:
    """Erase those of the `sdy.mesh` ops `mesh_ops` that are symbols of the
    module itself (not of a nested module); whether there were any."""
    erased = [op for op in mesh_ops if op.block == module.body]
    for op in erased:
        op.erase()
    return bool(erased)


@lru_cache(maxsize=_KEPT)
def mesh_model(attr) -> Mesh:
    """Mesh.from_attr, kept per mesh attribute (_KEPT)."""
    return Mesh.from_attr(attr)


class Meshes:
    """The module's `sdy.mesh` symbols, to resolve a sharding's mesh."""

    def __init__(self, module: ir.Module):
        self.attrs: dict[str, ir.Attribute] = {}
        for op in module.body.operations:
            if op.operation.name == "sdy.mesh":
                name = ir.StringAttr(op.attributes["sym_name"]).value
                self.attrs[name] = op.attributes["mesh"]
        self._models: dict[str, Mesh] = {}

    def attr_of(self, sharding) -> ir.Attribute | None:
        """The mesh attribute of a sharding (None for an unknown symbol)."""
        m = mesh_or_ref(sharding)
        if isinstance(m, ir.FlatSymbolRefAttr):
            return self.attrs.get(m.value)
        return m

    def named(self, name: str) -> Mesh | None:
        if name not in self._models and name in self.attrs:
            self._models[name] = mesh_model(self.attrs[name])
        return self._models.get(name)

    def of_ref(self, ref) -> Mesh | None:
        """The mesh of a mesh reference or inlined mesh attribute."""
        if isinstance(ref, ir.FlatSymbolRefAttr):
            return self.named(ref.value)
        return mesh_model(ref)

    def of(self, sharding) -> Mesh | None:
        """The mesh of a sharding (None for an unknown symbol)."""
        return self.of_ref(mesh_or_ref(sharding))


# --- function arguments and results ----------------------------------------------
class _FuncAttrs:
    """A function's `arg_attrs` or `res_attrs`, one DictAttr per argument (or
    result). Arguments repeat the same few dictionaries (hundreds of weights,
    a handful of shardings): each distinct one is read, and each distinct
    change built, once."""

    def __init__(self, func, key: str):
        """`key`: "arg_attrs" or "res_attrs"."""
        self.func = as_operation(func)
        self.key = key
        attrs = self.func.attributes
        if key in attrs:
            self.items = list(ir.ArrayAttr(attrs[key]))
        else:
            count = _num_inputs(self.func) if key == "arg_attrs" else _num_results(self.func)
            self.items = [ir.DictAttr.get({})] * count
        self.changed = False
        self._entries: dict = {}   # (DictAttr, name) -> attribute or None

    def get(self, index: int, name: str):
        """One entry of one argument's dictionary (None when absent); the
        dictionaries need not be all distinct (results' often are: names)."""
        d = self.items[index]
        key = (d, name)
        value = self._entries.get(key, self)
        if value is self:
            value = self._entries[key] = d[name] if name in d else None
        return value

    def all_of(self, name: str) -> list:
        """Each argument's entry `name` (None where absent)."""
        return [self.get(i, name) for i in range(len(self.items))]

    def set(self, index: int, name: str, value) -> None:
        """Set (or with None remove) one entry of one argument's dictionary."""
        old = self.items[index]
        new = _dict_with(old, name, value)
        if new != old:
            self.items[index] = new
            self.changed = True

    def write(self, always: bool = False) -> None:
        """Store the dictionaries when one changed (or `always`); none at all
        when all are empty."""
        if not (self.changed or always):
            return
        attrs = self.func.attributes
        if all(len(ir.DictAttr(d)) == 0 for d in self.items):
            if self.key in attrs:
                del attrs[self.key]
            return
        attrs[self.key] = ir.ArrayAttr.get(self.items)


# An argument's dictionary with one entry changed is kept (_KEPT): passes
# make the same few changes to the same few (a sharding inlined, closed,
# made even). __wrapped__ makes it.
@lru_cache(maxsize=_KEPT)
def _dict_with(d, name: str, value):
    """The DictAttr `d` with entry `name` set to `value` (None: removed)."""
    # by index, each value looked up by name: iterating a DictAttr, and
    # a NamedAttribute's `attr`, cost several times more
    entries = ir.DictAttr(d)
    names = [entries[i].name for i in range(len(entries))]
    kept = {n: entries[n] for n in names if n != name}
    if value is not None:
        kept[name] = value
    return ir.DictAttr.get(kept)


def _num_inputs(func) -> int:
    return len(ir.FunctionType(ir.TypeAttr(as_operation(func).attributes["function_type"]).value).inputs)


def _num_results(func) -> int:
    return len(ir.FunctionType(ir.TypeAttr(as_operation(func).attributes["function_type"]).value).results)


def func_type(func) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(as_operation(func).attributes["function_type"]).value)


def func_arg_attr(func, index: int, name: str):
    return _FuncAttrs(func, "arg_attrs").get(index, name)


def set_func_arg_attr(func, index: int, name: str, value) -> None:
    """Set (or with None remove) one attribute of one argument."""
    _set_func_attr(func, "arg_attrs", index, name, value)


def func_result_attr(func, index: int, name: str):
    return _FuncAttrs(func, "res_attrs").get(index, name)


def set_func_result_attr(func, index: int, name: str, value) -> None:
    _set_func_attr(func, "res_attrs", index, name, value)


def _set_func_attr(func, key: str, index: int, name: str, value) -> None:
    attrs = _FuncAttrs(func, key)
    attrs.set(index, name, value)
    attrs.write(always=True)


def func_arg_shardings(func) -> list:
    return _FuncAttrs(func, "arg_attrs").all_of(SHARDING)


def func_result_shardings(func) -> list:
    return _FuncAttrs(func, "res_attrs").all_of(SHARDING)


def func_result_sharding(func, index: int):
    return func_result_attr(func, index, SHARDING)


def set_func_result_sharding(func, index: int, sharding) -> None:
    set_func_result_attr(func, index, SHARDING, sharding)


def set_func_shardings(func, by_index: dict, results: bool = False) -> bool:
    """Set the shardings of some arguments (or results), by index, writing the
    attribute array once, and only if one of them changed. Returns whether one did."""
    return _rewrite_func_shardings(func, results, lambda i, _: by_index.get(i))


def replace_func_shardings(func, shardings: list, results: bool = False) -> bool:
    """Make `shardings` (None: none) the shardings of the arguments (or
    results), writing the attribute array once, and only if one of them
    changed. Returns whether one did."""
    attrs = _FuncAttrs(func, "res_attrs" if results else "arg_attrs")
    for i, new in enumerate(shardings):
        old = attrs.get(i, SHARDING)
        same = old is new if old is None or new is None else old == new   # (the bindings' == takes no None)
        if not same:
            attrs.set(i, SHARDING, new)
    attrs.write()
    return attrs.changed


def map_func_shardings(func, fn, results: bool = False) -> bool:
    """Replace every argument (or result) sharding S of `func` by fn(S, index),
    writing the attribute array once. Returns whether any sharding changed."""
    return _rewrite_func_shardings(func, results, lambda i, s: None if s is None else fn(s, i))


def _rewrite_func_shardings(func, results: bool, new_sharding) -> bool:
    """new_sharding(index, current sharding or None) -> the sharding to set,
    or None to leave it; the attribute array is written once, if one changed."""
    key = "res_attrs" if results else "arg_attrs"
    attrs = _FuncAttrs(func, key)
    for i in range(len(attrs.items)):
        old = attrs.get(i, SHARDING)
        new = new_sharding(i, old)
        if new is not None and (old is None or new != old):
            attrs.set(i, SHARDING, new)
    attrs.write()
    return attrs.changed


def _first_non_maximal_mesh_ref(shardings, meshes: Meshes):
    for s in shardings:
        if s is not None:
            mesh = meshes.of(s)
            if mesh is None or not mesh.is_maximal:
                return mesh_or_ref(s)
    return None


def func_arg_shardings_or_open(func, meshes: Meshes) -> list | None:
    """Shardy's getFuncArgShardings: None unless some argument has a sharding on a
    non-maximal mesh; then every argument's sharding, fully open where missing."""
    return _shardings_or_open(func_arg_shardings(func), func_type(func).inputs, meshes)


def func_result_shardings_or_open(func, meshes: Meshes) -> list | None:
    """Like func_arg_shardings_or_open, for the results."""
    return _shardings_or_open(func_result_shardings(func), func_type(func).results, meshes)


def _shardings_or_open(shardings, types, meshes: Meshes) -> list | None:
    ref = _first_non_maximal_mesh_ref(shardings, meshes)
    if ref is None:
        return None
    return [s if s is not None else fully_replicated(ref, rank_of(t), closed=False)
            for s, t in zip(shardings, types)]


# --- ops' own sharding lists -----------------------------------------------------
def op_shardings(op) -> list:
    """The op's `sdy.sharding` per-value list ([] when absent)."""
    op = as_operation(op)
    return per_value(op.attributes[SHARDING]) if SHARDING in op.attributes else []


def set_op_shardings(op, shardings) -> None:
    if shardings:
        as_operation(op).attributes[SHARDING] = per_value_attr(shardings)


def _optional_attr(op, name):
    op = as_operation(op)
    return op.attributes[name] if name in op.attributes else None


# --- manual computations -----------------------------------------------------------
def manual_axes(op) -> list[str]:
    # (read by index: iterating the attribute ends in an IndexError, which costs more)
    return listed(sdy.ManualAxesAttr(as_operation(op).attributes["manual_axes"]))


def _first_free_index(axes, manual: list[str]) -> int:
    i = 0
    while i < len(axes) and axes[i].name in manual:
        i += 1
    return i


def erase_manual_axes(sharding, manual: list[str]):
    """The sharding seen inside a manual computation: manual axes (a prefix of each
    dimension, and in replicated/unreduced) dropped."""
    if not manual:
        return sharding
    return _erase_axes(sharding, tuple(manual), False)


def erase_free_axes(sharding, manual: list[str]):
    return _erase_axes(sharding, tuple(manual), True)


# The views of a sharding inside and outside a manual computation are kept,
# per sharding and manual axes (at most _KEPT of each): the passes of a
# pipeline ask for the same few (a manual computation's in/out shardings)
# again and again, and so does every run of a process (attributes are
# uniqued per context: model/sharding.py keeps its conversions the same way).
# Each kept function's __wrapped__ is the computation itself.


@lru_cache(maxsize=_KEPT)
def _erase_axes(sharding, manual: tuple[str, ...], keep_manual: bool):
    t = TensorSharding.from_attr(sharding)
    dims = []
    for d in t.dims:
        k = _first_free_index(d.axes, manual)
        dims.append(DimSharding(d.axes[:k] if keep_manual else d.axes[k:], d.is_closed, d.priority))
    free = [a for a in t.replicated if a.name not in manual]
    unreduced = [a for a in t.unreduced if a.name not in manual]
    return TensorSharding(t.mesh, tuple(dims), tuple(free), tuple(unreduced)).to_attr()


def add_free_axes(outer, new, manual: list[str]):
    """Shardy's addFreeAxesToManualComputationSharding: per dimension, the manual
    prefix of `outer` followed by the axes of `new`, with `new`'s open/closed
    and priority; replicated and unreduced axes stay those of `outer`."""
    return _add_free_axes(outer, new, tuple(manual))


@lru_cache(maxsize=_KEPT)
def _add_free_axes(outer, new, manual: tuple[str, ...]):
    base = TensorSharding.from_attr(erase_free_axes(outer, manual))
    o = TensorSharding.from_attr(outer)
    n = TensorSharding.from_attr(new)
    dims = [DimSharding(b.axes + d.axes, d.is_closed, d.priority) for b, d in zip(base.dims, n.dims)]
    dims += list(base.dims[len(dims):])
    return TensorSharding(n.mesh, tuple(dims), o.replicated, o.unreduced).to_attr()


# --- collectives ------------------------------------------------------------------
# Ops whose `replica_groups` may hold a mesh, in the order Shardy visits them.
REPLICA_GROUP_OPS = ("stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
                     "stablehlo.all_to_all", "stablehlo.collective_broadcast")


def replica_groups_on_mesh(op):
    """A stablehlo collective's `replica_groups` given as mesh axes (a
    ReplicaGroupMeshAxesAttr, whose `mesh` is a mesh or a reference), else None."""
    op = as_operation(op)
    if "replica_groups" not in op.attributes:
        return None
    attr = op.attributes["replica_groups"]
    if not stablehlo.ReplicaGroupMeshAxesAttr.isinstance(attr):
        return None
    return stablehlo.ReplicaGroupMeshAxesAttr(attr)


# --- data-flow ops ------------------------------------------------------------------
DATA_FLOW_OPS = frozenset({"stablehlo.while", "stablehlo.case", "stablehlo.optimization_barrier",
                           "sdy.named_computation", "sdy.manual_computation"})
_REGION_OPS = frozenset({"sdy.named_computation", "sdy.manual_computation"})


def is_data_flow_op(op) -> bool:
    return as_operation(op).name in DATA_FLOW_OPS


def _body(op) -> ir.Block:
    return as_operation(op).regions[0].blocks[0]


def _terminator(block) -> ir.Operation:
    return as_operation(block.operations[-1])


def block_arg_owners(op) -> list:
    """Block arguments that own a data-flow edge (named / manual computation bodies)."""
    op = as_operation(op)
    if op.name in _REGION_OPS:
        return list(_body(op).arguments)
    return []


def result_owners(op) -> list:
    return list(as_operation(op).results)


def block_arg_owner_shardings(op) -> list:
    op = as_operation(op)
    if op.name == "sdy.named_computation":
        a = _optional_attr(op, "in_shardings")
        return per_value(a) if a is not None else []
    if op.name == "sdy.manual_computation":
        manual = manual_axes(op)
        return [erase_manual_axes(s, manual) for s in per_value(op.attributes["in_shardings"])]
    return []


def set_block_arg_owner_shardings(op, shardings) -> None:
    op = as_operation(op)
    if op.name == "sdy.named_computation":
        op.attributes["in_shardings"] = per_value_attr(shardings)
    elif op.name == "sdy.manual_computation":
        manual = manual_axes(op)
        outer = per_value(op.attributes["in_shardings"])
        op.attributes["in_shardings"] = per_value_attr(
            [add_free_axes(o, n, manual) for o, n in zip(outer, shardings, strict=True)])


def result_owner_shardings(op) -> list:
    op = as_operation(op)
    if op.name in _REGION_OPS:
        a = _optional_attr(op, "out_shardings")
        return per_value(a) if a is not None else []
    return op_shardings(op)


def set_result_owner_shardings(op, shardings) -> None:
    op = as_operation(op)
    if op.name in _REGION_OPS:
        op.attributes["out_shardings"] = per_value_attr(shardings)
    else:
        set_op_shardings(op, shardings)


def edge_owner_from_target(op, target):
    """The owner of the edge `target` (a result or block argument of `op`) is on."""
    op = as_operation(op)
    if op.name == "stablehlo.while" and isinstance(target.owner, ir.Block):
        return op.results[ir.BlockArgument(target).arg_number]
    return target


def edge_owner_from_source(op, user, operand_number: int):
    """The owner of the edge whose source is operand `operand_number` of `user`
    (the data-flow op itself or the terminator of one of its blocks)."""
    op = as_operation(op)
    user = as_operation(user)
    if op.name in _REGION_OPS and user == op:
        return _body(op).arguments[operand_number]
    return op.results[operand_number]


def edge_sources(op, owner) -> list:
    """The values flowing into the edge of `owner`."""
    op = as_operation(op)
    if op.name in _REGION_OPS:
        if isinstance(owner.owner, ir.Block):
            return [op.operands[ir.BlockArgument(owner).arg_number]]
        return [_terminator(_body(op)).operands[result_number(owner)]]
    i = result_number(owner)
    if op.name == "stablehlo.while":
        return [op.operands[i], _terminator(op.regions[1].blocks[0]).operands[i]]
    if op.name == "stablehlo.case":
        return [_terminator(r.blocks[0]).operands[i] for r in op.regions]
    return [op.operands[i]]


def non_owner_targets(op, owner) -> list:
    op = as_operation(op)
    if op.name == "stablehlo.while":
        i = result_number(owner)
        return [op.regions[0].blocks[0].arguments[i], op.regions[1].blocks[0].arguments[i]]
    return []


def keeps_owner_shardings_divisible(op) -> bool:
    return as_operation(op).name == "sdy.manual_computation"


def _edge_owner_sharding(op, owner):
    if isinstance(owner.owner, ir.Block):
        lst, i = block_arg_owner_shardings(op), ir.BlockArgument(owner).arg_number
    else:
        lst, i = result_owner_shardings(op), result_number(owner)
    return lst[i] if lst else None


def _set_edge_owner_sharding(op, owner, sharding) -> None:
    if isinstance(owner.owner, ir.Block):
        lst, i = block_arg_owner_shardings(op), ir.BlockArgument(owner).arg_number
        if not lst:
            lst = open_shardings_with([v.type for v in block_arg_owners(op)], i, sharding)
        else:
            lst[i] = sharding
        set_block_arg_owner_shardings(op, lst)
    else:
        lst, i = result_owner_shardings(op), result_number(owner)
        if not lst:
            lst = open_shardings_with([v.type for v in result_owners(op)], i, sharding)
        else:
            lst[i] = sharding
        set_result_owner_shardings(op, lst)


# --- data-flow edges ------------------------------------------------------------------
def data_flow_op_of_edge(edge) -> ir.Operation:
    """The op a (func) data-flow edge stands for: the one whose result, or whose
    region's block argument, the edge reads."""
    return owning_op(as_operation(edge).operands[0])


def is_edge_owner(value) -> bool:
    """Whether `value` owns a data-flow edge (getDataFlowEdgeOwner returns it
    for itself): a result of a data-flow op, or a block argument of a named /
    manual computation's body. A while body's block argument, a function
    argument or a result of an op that is not a data-flow op owns none;
    Shardy's passes still accept an sdy.data_flow_edge on one (its lit tests
    have some) but never ask for its sources."""
    op = owning_op(value)
    if op.name not in DATA_FLOW_OPS:
        return False
    return not isinstance(value.owner, ir.Block) or op.name in _REGION_OPS


def data_flow_edge_of_owner(owner) -> ir.Operation | None:
    """The `sdy.data_flow_edge` on `owner`: its single user, if that is one."""
    if owner is None:
        return None
    user = single_user(owner)
    return user if user is not None and user.name == "sdy.data_flow_edge" else None


def data_flow_edge_of_target(target) -> ir.Operation | None:
    """DataFlowEdgeOp::lookup(target)."""
    op = owning_op(target)
    if not is_data_flow_op(op):
        return None
    return data_flow_edge_of_owner(edge_owner_from_target(op, target))


def data_flow_edge_of_source(user, operand_number: int) -> ir.Operation | None:
    """DataFlowEdgeOp::lookup(source operand)."""
    user = as_operation(user)
    op = as_operation(user.parent) if user.has_trait(ir.IsTerminatorTrait) else user
    if not is_data_flow_op(op):
        return None
    return data_flow_edge_of_owner(edge_owner_from_source(op, user, operand_number))


# --- a value's sharding -------------------------------------------------------------
def shardable_value(value):
    """The value whose sharding stands for `value` (Shardy's getShardableValue), or
    None for block arguments nothing can shard (e.g. a reduce body's scalars)."""
    edge = data_flow_edge_of_target(value)
    if edge is not None:
        return edge.results[0]
    if not isinstance(value.owner, ir.Block):
        return value
    op = owning_op(value)
    if op.name == "func.func":
        return value
    if is_data_flow_op(op):
        return edge_owner_from_target(op, value)
    if op.name == "stablehlo.async_start":
        return op.operands[ir.BlockArgument(value).arg_number]
    return None


# Single-result ops whose sharding is an attribute of its own, not an entry
# of an `sdy.sharding` list.
OWN_SHARDING_ATTR = {"sdy.data_flow_edge": "sharding", "sdy.sharding_constraint": "sharding",
                     "sdy.reshard": "sharding", **{name: "out_sharding" for name in COLLECTIVE_OPS}}


def get_sharding(value):
    value = shardable_value(value)
    if value is None:
        return None
    op = owning_op(value)
    name = op.name
    if name == "func.func":
        return func_arg_attr(op, ir.BlockArgument(value).arg_number, SHARDING)
    if name in OWN_SHARDING_ATTR:
        return _optional_attr(op, OWN_SHARDING_ATTR[name])
    if is_data_flow_op(op):
        return _edge_owner_sharding(op, value)
    lst = op_shardings(op)
    return lst[result_number(value)] if lst else None


def set_sharding(value, sharding) -> None:
    value = shardable_value(value)
    if value is None:
        return
    op = owning_op(value)
    name = op.name
    if name == "func.func":
        set_func_arg_attr(op, ir.BlockArgument(value).arg_number, SHARDING, sharding)
    elif name in OWN_SHARDING_ATTR:
        op.attributes[OWN_SHARDING_ATTR[name]] = sharding
    elif is_data_flow_op(op):
        _set_edge_owner_sharding(op, value, sharding)
    else:
        replace_sharding_at(op, result_number(value), sharding)


def replace_sharding_at(op, index: int, sharding) -> None:
    """Set result `index`'s entry of the op's `sdy.sharding`, creating fully open
    entries for the other results when the op has none."""
    op = as_operation(op)
    lst = op_shardings(op)
    if lst:
        lst[index] = sharding
    else:
        lst = open_shardings_with([r.type for r in op.results], index, sharding)
    set_op_shardings(op, lst)


def get_or_create_sharding(value, mesh_ref, closed_if_missing: bool = False):
    s = get_sharding(value)
    if s is not None:
        return s
    return fully_replicated(mesh_ref, rank_of(value), closed_if_missing)


# --- visiting every sharding ------------------------------------------------------------
@dataclass(frozen=True)
class FuncResult:
    """A function result, which has no Value of its own."""
    func: ir.Operation
    index: int


ShardingFn = Callable[[ir.Attribute, object], ir.Attribute]


def transform_shardings(root, fn: ShardingFn, of_sharding_only: bool = False,
                        ops: list | None = None, by_name: dict | None = None) -> bool:
    """Replace every sharding S under `root` by fn(S, value-or-FuncResult), in
    Shardy's order: pre-order over ops; a function's arguments then results; a
    manual computation's in then out shardings; other data-flow ops' block
    argument then result owners; any other op's result shardings.

    `of_sharding_only`: fn looks at S alone (never at the value) and is
    called once per distinct sharding; ops' `sdy.sharding` lists, which
    repeat, are then rewritten once per distinct list.

    `ops`: `root` and the ops nested in it in pre-order (e.g. a census'),
    read instead of walking. `by_name` (with `of_sharding_only`):
    the same ops grouped by name (e.g. a census' `by_names()`), for an fn whose results
    do not depend on the order it sees shardings in: the groups are visited
    one after the other, and only special ops' names are looked at.

    Returns whether any sharding changed (fn gave another)."""
    if of_sharding_only:
        fn = once_per_sharding(fn)
    lists = {} if of_sharding_only else None
    if by_name is None:
        return _walk(root, fn, transform=True, lists=lists, ops=ops)
    assert of_sharding_only
    return _walk_by_name(by_name, fn, True, lists)


def once_per_sharding(fn: ShardingFn) -> ShardingFn:
    """fn for a sharding-only rewrite, called once per distinct sharding (its
    second argument is not passed on)."""
    done: dict = {}

    def once(sharding, _value):
        new = done.get(sharding)
        if new is None:
            new = done[sharding] = fn(sharding, None)
        return new
    return once


def walk_shardings(root, fn: Callable[[ir.Attribute, object], None], by_name: dict | None = None) -> None:
    """Call fn(S, value-or-FuncResult) on every sharding, in transform_shardings'
    order. With `by_name` (as transform_shardings'): fn(S, None) once per
    distinct sharding, in no particular order (e.g. to look whether any
    sharding is of some kind)."""
    def consume(s, v):
        fn(s, v)
        return s
    if by_name is None:
        _walk(root, consume, transform=False)
    else:
        _walk_by_name(by_name, once_per_sharding(consume), False, {})


# Ops whose shardings are not (only) in an `sdy.sharding` list of their own.
_SPECIAL_OPS = frozenset({"func.func", *DATA_FLOW_OPS, *OWN_SHARDING_ATTR})


def _walk(root, fn, transform: bool, lists: dict | None = None, ops: list | None = None) -> bool:
    """`lists`: with a value-independent fn, old `sdy.sharding` list -> new
    list. `ops`: as transform_shardings'. Whether a sharding changed."""
    # Most ops have no sharding: only the op's name and its `sdy.sharding`
    # attribute (if any) are read before skipping it. The plain ops between
    # two special ones are visited together (fn still sees them in order).
    plain: list = []
    changed = False
    for op in op_list(root) if ops is None else ops:
        name = op.name
        if name in _SPECIAL_OPS:
            if plain:
                changed |= _walk_sharding_lists(plain, fn, transform, lists)
                plain = []
            changed |= _walk_special(op, name, fn, transform, values=lists is None)
        else:
            plain.append(op)
    if plain:
        changed |= _walk_sharding_lists(plain, fn, transform, lists)
    return changed


def _walk_by_name(by_name: dict, fn, transform: bool, lists: dict) -> bool:
    """_walk for a value-independent fn over ops grouped by name (see transform_shardings)."""
    changed = False
    for name, group in by_name.items():
        if name in _SPECIAL_OPS:
            for op in group:
                changed |= _walk_special(op, name, fn, transform, values=False)
        else:
            changed |= _walk_sharding_lists(group, fn, transform, lists)
    return changed


_UNSEEN = object()


def _walk_sharding_lists(ops, fn, transform: bool, lists: dict | None) -> bool:
    """The `sdy.sharding` list of each of these ops (none special) that has one.
    With `lists` (a value-independent fn: values are not read), a list seen
    before is not rewritten again but replaced by its rewrite (None: it stays):
    a list is rewritten the same way whatever the op, since the module was
    verified and the list has one sharding per result. Whether a sharding changed."""
    changed = False
    for op in ops:
        attrs = op.attributes   # each read goes through the bindings: once
        attr = attrs.get(SHARDING)
        if attr is None:
            continue
        if lists is not None:
            done = lists.get(attr, _UNSEEN)
            if done is not _UNSEEN:
                if done is not None and transform:
                    attrs[SHARDING] = done
                    changed = True
                continue
        lst = per_value(attr)
        if not lst:
            continue
        if lists is not None:
            new = [fn(s, None) for s in lst]
        else:
            new = [fn(s, v) for s, v in zip(lst, list(op.results) or [None], strict=True)]
        new_attr = per_value_attr(new) if transform and new != lst else None
        if new_attr is not None:
            attrs[SHARDING] = new_attr
            changed = True
        if lists is not None:
            lists[attr] = new_attr
    return changed


def _walk_special(op, name: str, fn, transform: bool, values: bool = True) -> bool:
    """The shardings of a function, a data-flow op or an op with a sharding
    attribute of its own. `values`: fn is given the values (else None for a
    function's arguments and results: a sharding-only fn). Whether one changed."""
    if name == "func.func":
        return _walk_func(op, fn, transform, values)
    if name == "sdy.manual_computation":
        changed = _walk_list(op, "in_shardings", list(_body(op).arguments), fn, transform)
        return _walk_list(op, "out_shardings", list(op.results), fn, transform) or changed
    if name in DATA_FLOW_OPS:
        return _walk_owner_lists(op, fn, transform)
    key = OWN_SHARDING_ATTR[name]
    attrs = op.attributes
    s = attrs.get(key)
    if s is None:
        return False
    new = fn(s, op.results[0])
    if transform and new != s:
        attrs[key] = new
        return True
    return False


def _walk_func(func, fn, transform: bool, values: bool = True) -> bool:
    # (hundreds of arguments: listed only when fn looks at them)
    changed = False
    args = list(func.regions[0].blocks[0].arguments) if values and func.regions[0].blocks else None
    for key, target in (("arg_attrs", "arg"), ("res_attrs", "res")):
        attrs = _FuncAttrs(func, key)
        for i in range(len(attrs.items)):
            s = attrs.get(i, SHARDING)
            if s is None:
                continue
            if not values:
                where = None
            else:
                where = (args[i] if args is not None else None) if target == "arg" else FuncResult(func, i)
            new = fn(s, where)
            if transform and new != s:
                attrs.set(i, SHARDING, new)
                changed = True
        attrs.write()
    return changed


def _walk_list(op, attr_name, values, fn, transform: bool) -> bool:
    a = _optional_attr(op, attr_name)
    if a is None:
        return False
    lst = per_value(a)
    if not lst:
        return False
    if not values:
        values = [None]
    new = [fn(s, v) for s, v in zip(lst, values, strict=True)]
    if transform and new != lst:
        op.attributes[attr_name] = per_value_attr(new)
        return True
    return False


def _walk_owner_lists(op, fn, transform: bool) -> bool:
    changed = False
    for get, put, owners in ((block_arg_owner_shardings, set_block_arg_owner_shardings, block_arg_owners(op)),
                             (result_owner_shardings, set_result_owner_shardings, result_owners(op))):
        lst = get(op)
        if not lst:
            continue
        values = owners or [None]
        new = [fn(s, v) for s, v in zip(lst, values, strict=True)]
        if transform and new != lst:
            put(op, new)
            changed = True
    return changed


# --- small conversions ------------------------------------------------------------------


def is_fully_closed(sharding) -> bool:
    return all(sdy.DimensionShardingAttr(d).is_closed for d in sdy.TensorShardingAttr(sharding).dimension_shardings)


def unreduced_axes(sharding) -> list:
    return list(sdy.TensorShardingAttr(sharding).unreduced_axes)


def with_unreduced(sharding, unreduced) -> ir.Attribute:
    s = sdy.TensorShardingAttr(sharding)
    return sdy.TensorShardingAttr.get(s.mesh_or_ref, list(s.dimension_shardings),
                                      list(s.replicated_axes), list(unreduced))




def is_equivalent(sharding, other) -> bool:
    """Shardy's TensorShardingAttr::isEquivalent (as in jaxlib's version): same
    mesh and dimension axes; open/closed, priorities, replicated and unreduced
    axes do not count; None and fully replicated shardings are all equivalent."""
    def dim_axes(s) -> list:
        return [list(sdy.DimensionShardingAttr(d).axes) for d in sdy.TensorShardingAttr(s).dimension_shardings]

    if sharding is None:
        return other is None or all(not axes for axes in dim_axes(other))
    if other is not None and sharding == other:   # (attributes are uniqued: the same one, not read)
        return True
    if all(not axes for axes in dim_axes(sharding)):
        return other is None or all(not axes for axes in dim_axes(other))
    if other is None:
        return False
    if mesh_or_ref(sharding) != mesh_or_ref(other):
        return False
    return dim_axes(sharding) == dim_axes(other)
