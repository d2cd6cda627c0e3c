"""Write the shardings the rules derived (relations final_*) into the IR.

Shardings repeat a lot (every activation of a layer has the same one), so
each distinct sharding gets a small id from its rows (no IR access) and its
attribute is built once; an op's `sdy.sharding` list is cached by its ids.
Op results are written one op at a time (all results of an op in one
`sdy.sharding` list), function argument and result attributes once per
function.
"""
from __future__ import annotations

from collections import defaultdict
from functools import cached_property, lru_cache
from itertools import compress
from operator import itemgetter

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.shardings import (DATA_FLOW_OPS, OWN_SHARDING_ATTR, SHARDING, get_sharding, set_func_shardings,
                                 set_sharding)
from sdylog.ir.types import rank_of
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import DimSharding, TensorSharding

# Ops whose result shardings live somewhere else than the op's `sdy.sharding`
# list (set_sharding knows where).
_SPECIAL = DATA_FLOW_OPS | OWN_SHARDING_ATTR.keys() | {"sdy.func_data_flow_edge", "stablehlo.async_start"}


class _Attrs:
    """Sharding attributes built from the final_* relations, shared by equal shardings.

    A sharding is named by an id, one per distinct content (mesh, rank,
    dimension axes, and the rare flags, replicated and unreduced axes): its
    parts are ints and tuples that hash and compare without the bindings."""

    def __init__(self, engine, facts):
        self.facts = facts
        # a tensor's mesh (with a single mesh in the module, the rules can name
        # no other: its rows are not read)
        self.only_mesh = next(iter(facts.meshes)) if len(facts.meshes) == 1 else None
        self.mesh_of = {} if self.only_mesh is not None else dict(engine.select("final_mesh", "t", "mesh"))
        # A tensor's dimension axes are a set of final_dim_axis rows (without
        # the tensor column), a few of a few dozen distinct ones: each distinct
        # row is one bit, a tensor's set their union (an int: no list or tuple
        # per tensor, no sorting but for a new sharding).
        self.axis_rows: list = []   # bit number -> row (d, pos, axis, pre, size)
        bits: dict = {}             # row -> its bit
        self.axes = axes = {}       # tensor -> its rows' bits
        bit_of, axes_of = bits.get, axes.get
        for t, d, pos, axis, pre, size in engine.select("final_dim_axis", "t", "d", "pos", "axis", "pre_size", "size"):
            rest = (d, pos, axis, pre, size)
            bit = bit_of(rest)
            if bit is None:
                bit = bits[rest] = 1 << len(self.axis_rows)
                self.axis_rows.append(rest)
            mask = axes_of(t)
            axes[t] = bit if mask is None else mask | bit
        # (only the dimensions that are not open without priority have a
        # final_dim row; replicated and unreduced axes are rare too): the few
        # tensors that have any, with their rows as tuples
        dims, replicated, unreduced = defaultdict(list), defaultdict(list), defaultdict(list)
        priority = {(t, d): p for t, d, p in engine.select("final_dim_priority", "t", "d", "priority")}
        for t, d, closed in engine.select("final_dim", "t", "d", "closed"):
            dims[t].append((d, closed, priority.get((t, d))))
        for t, a, pre, size in engine.select("final_replicated", "t", "axis", "pre_size", "size"):
            replicated[t].append((a, pre, size))
        for t, a, pre, size in engine.select("final_unreduced", "t", "axis", "pre_size", "size"):
            unreduced[t].append((a, pre, size))
        self.extra = {t: (tuple(sorted(dims.get(t, ()))), tuple(replicated.get(t, ())), tuple(unreduced.get(t, ())))
                      for t in dims.keys() | replicated.keys() | unreduced.keys()}
        self._ids: dict = {}          # sharding content -> id
        self.attrs: list = []         # id -> TensorShardingAttr
        self.meshes_of_id: list = []  # id -> mesh name
        self._per_value: dict = {}

    def _mesh(self, name: str):
        """A TensorSharding's mesh: the symbol's name, or an inlined mesh's model."""
        return self.facts.meshes[name] if name.startswith("@inline.") else name

    def ids_of(self, tensors, ranks: list) -> list[int]:
        """The id of the derived sharding of each (value, tensor) of `tensors`
        (`ranks`: value id -> its rank). Tensors are many: one loop here, not
        a call per tensor."""
        mesh, mesh_of, axes_of, extra_of = self.only_mesh, self.mesh_of, self.axes.get, self.extra.get
        known = self._ids.get
        ids = []
        for v, t in tensors:
            content = (mesh or mesh_of[t], ranks[v], axes_of(t, 0), extra_of(t))
            sid = known(content)
            ids.append(self._content_id(content) if sid is None else sid)
        return ids

    def _content_id(self, content: tuple) -> int:
        """The id of a sharding content not seen yet, its attribute built."""
        mesh, rank, mask, extra = content
        rows, i = [], 0
        while mask:
            if mask & 1:
                rows.append(self.axis_rows[i])
            mask >>= 1
            i += 1
        dims, replicated, unreduced = extra or ((), (), ())
        return self._new_id(content, mesh, self._build(mesh, rank, dims, tuple(sorted(rows)), replicated, unreduced))

    def _new_id(self, content, mesh: str, attr) -> int:
        sid = self._ids[content] = len(self.attrs)
        self.attrs.append(attr)
        self.meshes_of_id.append(mesh)
        return sid

    def _build(self, mesh: str, rank: int, dims: tuple, axes: tuple, replicated: tuple, unreduced: tuple):
        """The attribute of a sharding, from its rows (sharding_attr)."""
        return sharding_attr(ir.Context.current, self._mesh(mesh), self.facts.meshes[mesh], rank, dims, axes,
                             replicated, unreduced)

    def open_id(self, mesh: str, rank: int) -> int:
        """A fully open sharding of the given rank on the mesh."""
        content = ("open", mesh, rank)
        sid = self._ids.get(content)
        if sid is None:
            sharding = TensorSharding.replicated_on(self._mesh(mesh), rank, closed=False)
            sid = self._new_id(content, mesh, sharding.to_attr())
        return sid

    def per_value(self, ids: tuple):
        """The `sdy.sharding` list attribute of these sharding ids: ops repeat the same lists."""
        a = self._per_value.get(ids)
        if a is None:
            a = self._per_value[ids] = sdy.TensorShardingPerValueAttr.get([self.attrs[i] for i in ids])
        return a


_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


# The attributes sharding_attr built are kept (at most _KEPT): the rows are
# plain ints and strings, and a process's runs derive the same few
# shardings again (every run of a model, and the layers of one model). The
# kept function's __wrapped__ builds.
_KEPT = 4096


@lru_cache(maxsize=_KEPT)
def sharding_attr(context, mesh, model: Mesh, rank: int, dims: tuple, axes: tuple, replicated: tuple,
                  unreduced: tuple):
    """The attribute, in `context`, of the sharding with these final_* rows
    (without the tensor column): on `mesh` (a symbol's name or an inlined
    mesh's model) whose model is `model`, of a tensor of rank `rank`; `dims`
    (d, closed, priority) of the dimensions that are not open without
    priority, `axes` (d, pos, axis, pre, size) sorted, `replicated` and
    `unreduced` (axis, pre, size)."""
    sizes = model.axis_sizes

    def axis(a: str, pre: int, size: int) -> AxisRef:
        return AxisRef(a) if pre == 1 and size == sizes.get(a, size) else AxisRef(a, SubAxis(pre, size))
    axes_of = defaultdict(list)   # dimension -> its axes, in position order
    for d, _, *ref in axes:
        axes_of[d].append(axis(*ref))
    flags = {d: (closed, prio) for d, closed, prio in dims}   # the others are open, no priority (None)
    if model.is_maximal:
        rank = 0   # (a maximal sharding has no dimensions, whatever the tensor's rank)
    dim_list = []
    for d in range(rank):
        closed, prio = flags.get(d, (0, None))
        dim_list.append(DimSharding(tuple(axes_of.get(d, ())), bool(closed), prio))
    position = {name: i for i, name in enumerate(sizes)}

    def in_mesh_order(rows):   # (as the verifier wants them; the rows come in any order)
        return tuple(axis(*x) for x in sorted(rows, key=lambda x: (position[x[0]], x[1])))
    with context:
        return TensorSharding(mesh, tuple(dim_list), in_mesh_order(replicated), in_mesh_order(unreduced)).to_attr()


# The derived relations write_back reads (rules/propagation/result.dl): all a
# propagation run must derive when nothing else will read the engine.
WRITE_BACK_RELATIONS = ["final_mesh", "final_dim", "final_dim_priority", "final_dim_axis", "final_replicated",
                        "final_unreduced", "final_value", "final_func_result", "final_own_without_priorities",
                        "dead_op"]


def erase_dead_ops(engine, facts) -> int:
    """Erase the ops the rules found dead (dead_code.dl: Shardy's driver
    erases them as it pops them, so a propagation pass leaves none), users
    before producers; an op inside a dead op goes with it. Returns how many
    were erased."""
    dead = {o for (o,) in engine.select("dead_op", "o")}
    if not dead:
        return 0
    parent = {op: p for op, p, _ in facts.rows("op_in")}
    erased = 0
    for o in sorted(dead, reverse=True):   # (ids are pre-order: a user comes after its producers)
        if parent.get(o) not in dead:
            facts.ops[o].erase()
            erased += 1
    return erased


def write_back(module, engine, facts, options) -> None:
    attrs = _Attrs(engine, facts)
    rank_of_value = [0] * len(facts.values)   # (by id: the ids of values an erasure took are left out)
    for v, _, rank, _ in facts.rows("value"):
        rank_of_value[v] = rank
    final = engine.select("final_value", "v", "t")
    # Where each value lives, from the facts (no IR access): most values are
    # the one result of a plain op (not _SPECIAL) that had no `sdy.sharding`
    # list (`plain`: the list is written whole); the others are function
    # arguments, results of ops with several results or of ops that had a
    # list, and values kept elsewhere (set_sharding: block arguments, results
    # of _SPECIAL ops).
    places = _Places(facts)
    not_plain, value_ops = places.special | facts.sharded_ops, facts.value_ops
    plain, others = [], []   # (op id, sharding id), (value id, sharding id)
    for (v, _), sid in zip(final, attrs.ids_of(final, rank_of_value)):
        op_id = value_ops[v]
        if op_id < 0 or op_id in not_plain:
            others.append((v, sid))
        else:
            plain.append((op_id, sid))
    _write_others(facts, attrs, others, places)
    # (were a plain op given a list by a write elsewhere, it would still be
    # this one entry: the op has one result)
    ops, lists = facts.ops, {}
    for op_id, sid in plain:
        lst = lists.get(sid)
        if lst is None:
            lst = lists[sid] = attrs.per_value((sid,))
        ops[op_id].attributes[SHARDING] = lst
    _write_func_results(engine, facts, attrs, rank_of_value)
    # (rare: members of a sharding group that ends with no sharding)
    for (v,) in engine.select("final_own_without_priorities", "v"):
        value = facts.values[v]
        own = TensorSharding.from_attr(get_sharding(value))
        set_sharding(value, TensorSharding(own.mesh, tuple(DimSharding(d.axes, d.is_closed) for d in own.dims),
                                           own.replicated, own.unreduced).to_attr())


class _Places:
    """Which ops keep their results' shardings where, from the facts' op and
    op_result rows, each read only when asked: most values are a plain op's
    one result, which needs neither."""

    def __init__(self, facts):
        self.facts = facts
        # ops of _SPECIAL names (the op rows are read only when the module has ops of such names)
        names = _SPECIAL & facts.op_names
        op_rows = facts.rows("op") if names else ()
        self.special = set(compress(map(_FIRST, op_rows), map(names.__contains__, map(_SECOND, op_rows))))

    @cached_property
    def several(self) -> set:
        """Ops with several results (a result at index > 0)."""
        result_rows = self.facts.rows("op_result")
        return set(compress(map(_FIRST, result_rows), map(_SECOND, result_rows)))

    @cached_property
    def result_row(self):
        """Value id -> its op_result row (op id, index, value); None for a value that is no op result."""
        result_rows = self.facts.rows("op_result")
        return dict(zip(map(_THIRD, result_rows), result_rows)).get


def _write_others(facts, attrs: _Attrs, others: list, places: _Places) -> None:
    """Write the (value id, sharding id) pairs of values that are not a plain
    op's one result (see write_back)."""
    args = defaultdict(dict)    # func op -> argument index -> sharding
    by_op = defaultdict(dict)   # op id (with several results, or a list) -> result index -> sharding id
    func_args = facts.func_args
    written_elsewhere = False   # a value of a special op or a block argument was written
    for v, sid in others:
        if v in func_args:
            func, i = func_args[v]
            args[func][i] = attrs.attrs[sid]
            continue
        row = places.result_row(v)
        if row is None or row[0] in places.special:
            written_elsewhere = True
            new = attrs.attrs[sid]
            value = facts.values[v]
            old = get_sharding(value)
            if old is None or old != new:
                set_sharding(value, new)
        else:
            by_op[row[0]][row[1]] = sid
    # Whether an op has an `sdy.sharding` list: the facts know (unless writes
    # elsewhere may have added one since), so the IR is not asked.
    sharded = None if written_elsewhere else facts.sharded_ops
    for op_id, by_index in by_op.items():
        _set_result_shardings(facts.ops[op_id], by_index, attrs, None if sharded is None else op_id in sharded,
                              op_id not in places.several)
    for func, by_index in args.items():
        set_func_shardings(func, by_index)


def _write_func_results(engine, facts, attrs: _Attrs, rank_of_value: list) -> None:
    """The derived shardings of functions' results, one attribute array per function."""
    results = defaultdict(dict)
    returned = {(f, i): v for f, i, v in facts.rows("func_return")}   # (the result tensor's rank is its value's)
    rows = list(engine.select("final_func_result", "func", "index", "t"))
    ids = attrs.ids_of([(returned[f, index], t) for f, index, t in rows], rank_of_value)
    for (_, _, t), sid in zip(rows, ids):
        func, i = facts.func_results[t]
        results[func][i] = attrs.attrs[sid]
    for func, by_index in results.items():
        set_func_shardings(func, by_index, results=True)


def _set_result_shardings(op, by_index: dict, attrs: _Attrs, has_list: bool | None, one_result: bool) -> None:
    """An op's `sdy.sharding` list with the given entries (sharding ids by
    result index; others kept, or fully open when the op had none).
    `has_list`: whether the op has a list (None: ask the op)."""
    attributes = op.attributes   # (each read goes through the bindings: once)
    if has_list is None:
        has_list = SHARDING in attributes
    if has_list:
        old = list(sdy.TensorShardingPerValueAttr(attributes[SHARDING]).shardings)
        if all(old[i] == attrs.attrs[sid] for i, sid in by_index.items()):
            return
        for i, sid in by_index.items():
            old[i] = attrs.attrs[sid]
        attributes[SHARDING] = sdy.TensorShardingPerValueAttr.get(old)
        return
    if one_result:   # most ops (by_index has its one result)
        ids = (by_index[0],)
    else:
        # Fully open entries, on the first entry's mesh, for the results the
        # rules left alone (types read only for them).
        mesh = attrs.meshes_of_id[next(iter(by_index.values()))]
        ids = tuple(by_index[i] if i in by_index else attrs.open_id(mesh, rank_of(r))
                    for i, r in enumerate(op.results))
    attributes[SHARDING] = attrs.per_value(ids)
