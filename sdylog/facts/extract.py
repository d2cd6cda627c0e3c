"""Walk a module once and emit the input relations of rules/schema.dl.

The FactSet also keeps the way back from ids to IR objects (ops, values), so
the back end can write derived shardings into the module.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain, islice, repeat
from operator import itemgetter

from jaxlib.mlir import ir

from sdylog.facts.op_kinds import OpKind, flow_values, op_kind
from sdylog.ir.diagnostics import error_at
from sdylog.ir.op_properties import is_elementwise
from sdylog.ir.shardings import (SHARDING, SHARDING_RULE, data_flow_op_of_edge, edge_sources, is_edge_owner,
                                 shardable_value)
from sdylog.ir.types import is_static_shaped, is_tensor, num_elements, shape_of, unpropagatable_type_error
from sdylog.ir.walk import func_ops, listed, op_list, op_names, symbol_name
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.rule import FactorKind
from sdylog.model.sharding import TensorSharding, sharding_per_value
from sdylog.oprules import RuleCache
from sdylog.oprules.registry import NO_KEY, NO_RULE, key_of, known_op, unknown_op_message

# The relations read from shardings (and meshes, which inlined ones add and
# whose units the shardings' sub-axes cut): the rows a step that changes
# shardings in place changes (read again by read_shardings).
SHARDING_RELATIONS = frozenset({
    "mesh", "mesh_axis", "mesh_device", "maximal_mesh", "mesh_canonical", "axis_unit", "chain_unit",
    "sharding", "sharding_dim", "sharding_dim_priority", "sharding_dim_axis", "sharding_replicated",
    "sharding_unreduced",
    "value_sharding", "func_result_sharding", "manual_in_sharding", "manual_out_sharding"})


_UNKNOWN = object()   # a rule key not seen yet (None is a known "no rule")
# The most devices a mesh may have: XLA counts partitions in 32 bits (mhlo.num_partitions
# is an i32), and the units of an axis come from its prime factors (found by trial division).
MAX_DEVICES = 2 ** 31 - 1


def axis_units(size: int, bounds: set[int], split_sizes: set[int], others: int) -> list[tuple[int, int]]:
    """(pre_size, size) of the units of an axis of `size`: the coarsest split
    such that every sub-axis propagation can make is a union of units.

    Sub-axes come from the input (their boundaries `bounds`) and from
    factors that are not their dimension's minor-most one: such a factor of
    size s, after axes of total size P (a divisor of the other axes' sizes
    `others`), takes gcd(s / P, size) of the axis. If that is ever a proper
    divisor, the axis is split into its prime factors; otherwise it stays one
    unit (cut at the input's boundaries, when they form a chain)."""
    divisors_of_others = divisors(others)
    for s in split_sizes:
        for p in divisors_of_others:
            if s % p == 0 and math.gcd(s // p, size) not in (1, size):
                return prime_units(size)
    cuts = sorted({1, size} | {b for b in bounds if 1 <= b <= size})
    if all(b2 % b1 == 0 for b1, b2 in zip(cuts, cuts[1:])):
        return [(b1, b2 // b1) for b1, b2 in zip(cuts, cuts[1:])] or [(1, size)]
    return prime_units(size)


def untiled_sub_axes(units: list[tuple[int, int]], sub_axes: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The sub-axes (pre_size, size) of the input that are not a run of the
    axis's `units`: when the input's sub-axes do not form a chain (on an
    axis of size 6, "a":(1)2 and "a":(3)2, which Shardy says cannot
    coexist), no chain of units makes all of them. Each such sub-axis is a
    unit of its own (an axis_unit row with no chain_unit row), and the rules keep it apart from the units
    it cannot coexist with (units.dl, unit_clash)."""
    starts = {pre for pre, _ in units}
    ends = {pre * size for pre, size in units}
    return {(pre, size) for pre, size in sub_axes if pre not in starts or pre * size not in ends}


def prime_units(size: int) -> list[tuple[int, int]]:
    """(pre_size, size) of an axis's units: its prime factors, smallest first,
    major to minor (an axis of size 1 is one unit of size 1)."""
    units, pre = [], 1
    for p in prime_factors(size):
        units.append((pre, p))
        pre *= p
    return units or [(1, 1)]


def prime_factors(n: int) -> list[int]:
    """The prime factors of n, smallest first, with repeats (trial division
    up to the square root: fast for any mesh size up to MAX_DEVICES)."""
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors + ([n] if n > 1 else [])


def divisors(n: int) -> list[int]:
    """The divisors of n, ascending."""
    found = {1}
    for p in prime_factors(n):
        found |= {d * p for d in found}
    return sorted(found)


def _walk_with_names(fn) -> tuple[list, list[str]]:
    """`fn` and the ops nested in it (op_list), and their names (op_names)."""
    ops = op_list(fn)
    return ops, op_names(ops)


# What Shardy's verifier says of a sdy.func_data_flow_edge whose operand is neither a
# function's argument nor a call's result (then what it expects).
_FUNC_EDGE_ERROR = "'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge to "

class _OpRead:
    """An op the walk has read the head of (add_op_head): what its tail rows
    need, and, while the walk reads the ops nested in it, its blocks still
    to read and the ops left in the current one. A function's body has op
    None (its rows are add_func's)."""
    __slots__ = ("op_id", "op", "name", "func", "kind", "operands", "results", "blocks", "region", "left")

    def __init__(self, op_id: int, op, name, func: str, kind: OpKind | None, operands, results, blocks: list):
        self.op_id, self.op, self.name, self.func, self.kind = op_id, op, name, func, kind
        self.operands, self.results = operands, results
        self.blocks = blocks   # (region index, block), in order
        self.region = 0
        self.left = 0



@dataclass
class FactSet:
    relations: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))
    # Ids are dense when extracted; facts followed past erasures (facts/follow.py)
    # have None for the erased ops and values: loop over rows or skip None.
    ops: list = field(default_factory=list)        # op id -> ir.Operation (None: erased)
    values: list = field(default_factory=list)     # value id -> ir.Value (None: erased)
    value_ids: dict = field(default_factory=dict)  # ir.Value -> value id
    meshes: dict[str, Mesh] = field(default_factory=dict)
    module: ir.Module | None = None  # keeps the IR that `ops` and `values` point into alive
    func_results: dict = field(default_factory=dict)  # tensor id of a func result slot -> (func op, index)
    func_args: dict = field(default_factory=dict)     # value id of a func argument -> (func op, index)
    rules: list = field(default_factory=list)         # rule id -> OpShardingRule
    sharded_ops: set = field(default_factory=set)     # ids of the ops with a `sdy.sharding` list
    # value id -> the id of its op when it is the one result of an op, -1 for
    # other values
    value_ops: list = field(default_factory=list)
    op_names: set = field(default_factory=set)        # the names of the ops (one string each)
    shardings: list = field(default_factory=list)     # sharding id -> its TensorSharding
    mesh_symbols: list = field(default_factory=list)  # the `sdy.mesh` symbols, in module order
    # value id -> its type's id, and type id -> whether it is a ranked tensor
    value_type_ids: list = field(default_factory=list)
    type_is_ranked: list = field(default_factory=list)
    replicated: dict = field(default_factory=dict)    # (mesh, rank) -> add_replicated_sharding's id
    # whether some op's rule came from its own `sdy.sharding_rule` (which
    # passes add and drop: such facts do not outlive a change, facts/shared.py)
    rules_from_attributes: bool = False
    unknown_ops: bool = False   # some op is one the rule registry does not know (no rule)
    # the op ids in post-order (each op after the ops nested in it), as the
    # walk wrote their tail rows: the order a recursive walk would end them
    tail_order: list = field(default_factory=list)
    # op id -> the ids of its results, in order (a function's: none), as
    # its op_result rows give them (read_shardings reads them again)
    op_results: list = field(default_factory=list)

    def add(self, relation: str, *row) -> None:
        self.relations[relation].append(row)

    def rows(self, relation: str) -> list[tuple]:
        return self.relations.get(relation, [])

    def rows_per_value(self, of_types: str) -> list[tuple]:
        """(value, *row) for each value_type row (value, type) and each row
        (type, *row) of `of_types`: of type_dim, value_dim's rows; of
        type_elems, value_elems' (as rules/schema.dl derives them)."""
        rows = defaultdict(list)
        for t, *row in self.rows(of_types):
            rows[t].append(row)
        return [(v, *row) for v, t in self.rows("value_type") for row in rows.get(t, ())]

    def live_value_ids(self) -> list[int]:
        """The ids of the values not erased since extraction (all, unless
        the facts followed erasures: facts/follow.py), in order."""
        return [v for v, value in enumerate(self.values) if value is not None]

    def ranked_values(self) -> list[tuple]:
        """(value id,) of every value (a `value` row: not one of an erased
        op, facts/follow.py) whose type is a ranked tensor."""
        ranked, type_ids = self.type_is_ranked, self.value_type_ids
        return [(v,) for v in map(itemgetter(0), self.rows("value")) if ranked[type_ids[v]]]

    def add_replicated_sharding(self, mesh: str, rank: int) -> int:
        """A sharding id for the fully closed replicated sharding of `rank` on
        mesh symbol `mesh`, with its rows (no value carries it); added once
        (facts may be read by several runs: sdylog/facts/shared.py)."""
        sid = self.replicated.get((mesh, rank))
        if sid is None:
            sid = self.replicated[(mesh, rank)] = len(self.shardings)
            self.shardings.append(TensorSharding.replicated_on(mesh, rank))
            add_sharding_rows(self, sid, mesh, self.shardings[-1])
        return sid


def post_order(facts, op_ids) -> list[int]:
    """`op_ids` in Shardy's walk order: an op after the ops nested in it,
    before the ops after it."""
    wanted = set(op_ids)
    return [o for o in facts.tail_order if o in wanted] if wanted else []


def add_mesh_rows(facts, name: str, mesh: Mesh) -> None:
    """The mesh, mesh_axis, maximal_mesh and mesh_device rows of a mesh (`facts.add`)."""
    facts.add("mesh", name, mesh.num_devices if mesh.axes else len(mesh.device_ids))
    for i, a in enumerate(mesh.axes):
        facts.add("mesh_axis", name, a.name, i, a.size)
    if mesh.is_maximal:
        facts.add("maximal_mesh", name, mesh.device_ids[0])
    elif mesh.device_ids:
        for pos, dev in enumerate(mesh.device_ids):
            facts.add("mesh_device", name, pos, dev)


def add_sharding_rows(facts, sid: int, mesh: str, sharding: TensorSharding) -> None:
    """The sharding, sharding_dim, sharding_dim_axis, sharding_replicated and
    sharding_unreduced rows of sharding `sid` on mesh `mesh` (in facts.meshes)."""
    sizes = facts.meshes[mesh].axis_sizes
    facts.add("sharding", sid, mesh)

    def ref(a: AxisRef):
        lo, hi = a.interval(sizes.get(a.name, 1))
        return a.name, lo, hi // lo

    for d, dim in enumerate(sharding.dims):
        facts.add("sharding_dim", sid, d, int(dim.is_closed))
        if dim.priority is not None:
            facts.add("sharding_dim_priority", sid, d, dim.priority)
        for pos, a in enumerate(dim.axes):
            facts.add("sharding_dim_axis", sid, d, pos, *ref(a))
    for a in sharding.replicated:
        facts.add("sharding_replicated", sid, *ref(a))
    for a in sharding.unreduced:
        facts.add("sharding_unreduced", sid, *ref(a))


class _Extractor:
    def __init__(self, module: ir.Module, filename: str, conservative: bool, static_shapes: bool,
                 names_within=None, strict_rules: bool = False, rules: RuleCache | None = None,
                 plain: bool = False):
        self.facts = FactSet(module=module)
        self.strict_rules = strict_rules
        self.rules = rules or RuleCache(conservative, filename)
        if plain:   # the reference walk (tests): every op the plain way
            self.add_body = self.add_body_plain
        self._names_within = names_within or _walk_with_names
        self.filename = filename
        self.conservative = conservative
        self.static_shapes = static_shapes
        # type id -> why propagation rejects results of that type (unpropagatable_type_error)
        self._unpropagatable_types: dict[int, str] = {}
        self.module = module
        self._inline_meshes: dict[Mesh, str] = {}
        self._num_shardings = 0
        # (mesh, axis) -> the (pre_size, size) of its sub-axes in shardings
        self._sub_axes: dict[tuple[str, str], set[tuple[int, int]]] = defaultdict(set)
        self._split_sizes: set[int] = set()   # sizes of factors that are not a dimension's minor-most one
        self._rule_by_key: dict[tuple, int | None] = {}
        self._rule_ids: dict = {}  # OpShardingRule -> rule id
        self._value_type_ids: list = self.facts.value_type_ids  # value id -> its type's id
        # (first value id, function name) of each function's run of value ids: a
        # function's values get their ids while add_func reads it, one run each
        self._func_runs: list = []
        # types repeat across values: type -> its id -> (shape, element type name)
        self._type_ids: dict = {}
        self._types: list = []
        # op name -> its OpKind, for the names this extraction meets: they are
        # its op_names, and add_body's loop looks kinds up here without a call
        # (op_kinds.op_kind keeps every name's OpKind for the process)
        self._kinds: dict = {}
        self._dict_shardings: dict = {}  # DictAttr -> sharding_in's answer
        # Shardings repeat (after propagation, most ops carry one of a few):
        # equal ones share one id and one set of rows.
        self._sharding_ids: dict = {}    # TensorSharding -> its id
        self._list_ids: dict = {}        # an op's `sdy.sharding` attribute -> the ids of its shardings

    # ------------------------------------------------------------ ids
    def value_id(self, value, func: str) -> int:
        """The value's id; a value seen for the first time gets the next id
        (its value and value_dim rows are written at the end, add_value_rows)."""
        vid = self.facts.value_ids.get(value)
        return self.new_value_ids([value], func)[0] if vid is None else vid

    def new_value_ids(self, values: list, func: str) -> list[int]:
        """The next ids, for `values` (of `func`, none met before)."""
        f = self.facts
        if func != self._func_runs[-1][1]:
            raise AssertionError(f"a value of @{func} met while reading @{self._func_runs[-1][1]}")
        value_ids, type_ids, known_type = f.value_ids, self._value_type_ids, self._type_ids.get
        ids = []
        for value in values:
            vid = value_ids[value] = len(f.values)
            f.values.append(value)
            t = value.type
            tid = known_type(t)   # (types are few: a dict hit each)
            type_ids.append(self.type_id(t) if tid is None else tid)
            f.value_ops.append(-1)
            ids.append(vid)
        return ids

    def _known_value_id(self, value, func: str) -> int:
        """value_id when re-reading shardings (reread): the id the facts
        gave the value; one they do not know (a step made it) is an error."""
        vid = self.facts.value_ids.get(value)
        if vid is None:
            raise ValueError(f"re-reading shardings: a value in @{func} the facts do not know "
                             "(the step that made it did not drop the facts)")
        return vid

    def ids_of(self, values, func: str) -> list[int]:
        """value_id of each of `values` (a list, or a sequence of the
        bindings: an op's operands are values met before, one dict hit each)."""
        ids = list(map(self.facts.value_ids.get, values))
        if None in ids:
            ids = [self.value_id(value, func) for value in listed(values)]
        return ids

    def result_ids(self, op, op_id: int, func: str) -> list[int]:
        """The ids of an op's results: new ones, but for results met ahead of
        their op (a data-flow edge's result, met at its data-flow op), which
        keep theirs. value_ops names the op of a one result (met ahead or
        not: facts/shared.erasing follows the erasure of an edge by it)."""
        values = listed(op.results)
        f = self.facts
        if f.value_ids.keys().isdisjoint(values):
            ids = self.new_value_ids(values, func)
        else:
            ids = [self.value_id(value, func) for value in values]
        if len(ids) == 1:
            f.value_ops[ids[0]] = op_id
        return ids

    def type_id(self, t) -> int:
        """The id of a type (its shape and element type name in _types)."""
        tid = self._type_ids.get(t)
        if tid is None:
            tid = self._type_ids[t] = len(self._types)
            ranked = is_tensor(t)
            self._types.append((shape_of(t), str(t.element_type) if ranked else str(t)))
            self.facts.type_is_ranked.append(ranked)
            error = unpropagatable_type_error(t)
            if error is not None:
                self._unpropagatable_types[tid] = error
        return tid

    def add_value_rows(self) -> None:
        """The value and value_type rows of every value, in id order, and
        the type_dim and type_elems rows of their types (values are many,
        types a few)."""
        rels = self.facts.relations
        ranks = [len(shape) for shape, _ in self._types]
        elements = [element for _, element in self._types]
        type_ids = self._value_type_ids
        # (the ids as value_ids holds them, in id order: the rows share those ints, no copy per row)
        value_ids = self.facts.value_ids.values()
        assert len(value_ids) == len(type_ids)
        ends = [first for first, _ in self._func_runs[1:]] + [len(type_ids)]
        funcs = chain.from_iterable(repeat(func, end - first) for (first, func), end in zip(self._func_runs, ends))
        rels["value"].extend(zip(value_ids, funcs, map(ranks.__getitem__, type_ids),
                                 map(elements.__getitem__, type_ids)))
        rels["value_type"].extend(zip(value_ids, type_ids))
        rels["type_dim"].extend((t, d, size) for t, (shape, _) in enumerate(self._types) for d, size in enumerate(shape))
        # (the types in id order: _type_ids's keys, as type_id adds them)
        rels["type_elems"].extend((tid, num_elements(t)) for tid, t in enumerate(self._type_ids)
                                  if is_tensor(t) and is_static_shaped(t))

    def mesh_name(self, mesh: str | Mesh) -> str:
        if isinstance(mesh, str):
            if mesh not in self.facts.meshes:
                raise error_at(self.module.operation, f"unknown mesh @{mesh}", self.filename)
            return mesh
        name = self._inline_meshes.get(mesh)
        if name is None:
            name = f"@inline.{len(self._inline_meshes)}"
            self._inline_meshes[mesh] = name
            self.add_mesh(name, mesh)
        return name

    # ------------------------------------------------------------ meshes
    def add_mesh(self, name: str, mesh: Mesh) -> None:
        if mesh.num_devices > MAX_DEVICES:
            op = next((op for op in self.module.body.operations if op.name == "sdy.mesh"
                       and symbol_name(op) == name), self.module.operation)
            raise error_at(op, f"mesh @{name} has {mesh.num_devices} devices: at most {MAX_DEVICES} (2^31 - 1, "
                           "XLA's partition count is a 32-bit integer)", self.filename)
        self.facts.meshes[name] = mesh
        add_mesh_rows(self.facts, name, mesh)

    # ------------------------------------------------------------ shardings
    def add_sharding(self, sharding: TensorSharding) -> int:
        """The id of `sharding`: a new one with its rows, or that of an equal one."""
        sid = self._sharding_ids.get(sharding)
        if sid is not None:
            return sid
        f = self.facts
        sid = self._sharding_ids[sharding] = self._num_shardings
        self._num_shardings += 1
        mesh = self.mesh_name(sharding.mesh)
        f.shardings.append(sharding)
        add_sharding_rows(f, sid, mesh, sharding)
        for a in chain(*(d.axes for d in sharding.dims), sharding.replicated, sharding.unreduced):
            if a.sub is not None:
                self._sub_axes[(mesh, a.name)].add((a.sub.pre_size, a.sub.next_pre_size // a.sub.pre_size))
        return sid

    # ------------------------------------------------------------ walk
    def run(self) -> FactSet:
        f = self.facts
        for name, mesh in meshes_of_module(self.module).items():
            self.add_mesh(name, mesh)
            f.mesh_symbols.append(name)
        funcs = func_ops(self.module)
        if self.static_shapes:   # (ops outside functions: add_body checks the others)
            for op in self.module.body.operations:
                for r in op.results:
                    error = unpropagatable_type_error(r.type)
                    if error is not None:
                        raise error_at(op, error, self.filename)
        self.returns = {}
        self.func_edges = []
        self.manual_edges = []
        self.result_slots = {}
        for fn in funcs:
            self.add_func(fn)
        self.add_func_edges()
        f.op_names = set(self._kinds) | {"func.func"}   # (add_body saw every op but the functions)
        self.add_value_rows()
        self.add_units()
        first_slot = len(f.values)
        for name, (fn, count) in self.result_slots.items():
            for i in range(count):
                t = first_slot + len(f.func_results)
                f.func_results[t] = (fn, i)
                f.add("func_result_tensor", name, i, t)
        return f

    def reread(self, facts: FactSet) -> FactSet:
        """`facts` (of this module, ids kept) with their SHARDING_RELATIONS
        read again, in the order `run` reads them (so the shardings get the
        ids a fresh extraction would give them): the meshes; then each
        function's arguments and results, and its ops, each after the ops
        nested in it. A new FactSet: `facts` stay as they are (it shares
        their value ids, which a value the facts do not know would extend:
        such a value is an error here, not a new id)."""
        self.value_id = self._known_value_id
        kept = defaultdict(list, {name: rows for name, rows in facts.relations.items()
                                  if name not in SHARDING_RELATIONS})
        self.facts = f = replace(facts, relations=kept, meshes={}, mesh_symbols=[], shardings=[], sharded_ops=set(),
                                 replicated={})
        self._value_type_ids = f.value_type_ids
        for name, mesh in meshes_of_module(self.module).items():
            self.add_mesh(name, mesh)
            f.mesh_symbols.append(name)
        args = _by_index(f.rows("func_arg"))     # func -> its argument values, in index order
        heads = {o: (name, func) for o, name, func, _ in f.rows("op")}
        func_ops = {func: o for o, (name, func) in heads.items() if name == "func.func"}
        read = None   # the function whose ops are being read
        for o in f.tail_order:
            name, func = heads[o]
            if name == "func.func":
                continue   # (read before its ops, which every function with a body has)
            if func != read:
                read = func
                self.add_func_shardings(f.ops[func_ops[func]], func, args[func])
            op, results = f.ops[o], f.op_results[o]
            kind = self.kind_of(op, name)
            attrs = op.attributes
            self.add_list_shardings(op, attrs, o, results)
            if kind.shardings is not None:   # (add_op_sharding_rows' rows, with no _OpRead for most ops)
                kind.shardings(self, _OpRead(o, op, name, func, kind, (), results, ()), attrs)
        for r in {row[0] for row in f.rows("rule_factor")}:   # (the rules of the ops there are)
            self._split_sizes |= _rule_rows(f.rules[r])[1]
        self.add_units()
        return f

    def add_units(self) -> None:
        """axis_unit, chain_unit and mesh_canonical: equal meshes share the first
        one's units; each axis is split into the coarsest units every sub-axis
        propagation can make is a union of (see axis_units), and those units are
        its chain, major to minor (chain_unit); a sub-axis outside the chain gets
        a unit of its own, with no chain_unit row (untiled_sub_axes)."""
        f = self.facts
        canonical: dict[Mesh, str] = {}
        unit = 0
        for name, mesh in f.meshes.items():
            c = canonical.setdefault(mesh, name)
            f.add("mesh_canonical", name, c)
            if c != name:
                continue
            subs = defaultdict(set)
            for (m, a), sub_axes in self._sub_axes.items():
                if canonical.get(f.meshes.get(m)) == name:   # this mesh, or one equal to it
                    subs[a] |= sub_axes
            for a in mesh.axes:
                others = 1
                for b in mesh.axes:
                    if b.name != a.name:
                        others *= b.size
                bounds = {b for pre, size in subs.get(a.name, ()) for b in (pre, pre * size)}
                units = axis_units(a.size, bounds, self._split_sizes, others)
                for i, (pre, size) in enumerate(units):
                    f.add("axis_unit", unit, name, a.name, pre, size)
                    f.add("chain_unit", unit, i)
                    unit += 1
                for pre, size in sorted(untiled_sub_axes(units, subs.get(a.name, set()))):
                    f.add("axis_unit", unit, name, a.name, pre, size)
                    unit += 1

    def add_func(self, fn) -> None:
        f = self.facts
        name = symbol_name(fn)
        self._func_runs.append((len(f.values), name))
        vis = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
        f.add("func", name, int(vis is None or ir.StringAttr(vis).value == "public"))
        op_id = self.add_op_row(fn.operation, "func.func", name)
        f.op_results.append(())
        if len(fn.regions[0].blocks):
            self.add_func_body(fn, name, op_id)
        f.tail_order.append(op_id)

    def add_func_body(self, fn, name: str, op_id: int) -> None:
        f = self.facts
        block = fn.regions[0].blocks[0]
        args = []
        for i, arg in enumerate(block.arguments):
            vid = self.value_id(arg, name)
            args.append(vid)
            f.add("func_arg", name, i, vid)
            f.func_args[vid] = (fn.operation, i)
            f.add("block_arg", op_id, 0, i, vid)
            f.add("value_tensor", vid, vid)
        self.add_func_shardings(fn, name, args)
        self.add_body(fn.operation, name, _OpRead(op_id, None, None, name, None, (), (), [(0, block)]))
        term = block.operations[len(block.operations) - 1]
        rets = [self.value_id(v, name) for v in term.operands]
        self.returns[name] = (op_id, block, rets)
        for i, vid in enumerate(rets):
            f.add("func_return", name, i, vid)
        self.result_slots[name] = (fn.operation, len(rets))

    def add_func_shardings(self, fn, name: str, args: list[int]) -> None:
        """The shardings of a function's arguments (value ids `args`) and results."""
        f = self.facts
        attributes = fn.attributes
        if "arg_attrs" in attributes:
            for vid, a in zip(args, ir.ArrayAttr(attributes["arg_attrs"])):
                sharding = self.sharding_in(a)
                if sharding is not None:
                    f.add("value_sharding", vid, self.add_sharding(sharding))
        if "res_attrs" in attributes:
            for i, a in enumerate(ir.ArrayAttr(attributes["res_attrs"])):
                sharding = self.sharding_in(a)
                if sharding is not None:
                    f.add("func_result_sharding", name, i, self.add_sharding(sharding))

    def sharding_in(self, attrs) -> TensorSharding | None:
        """The `sdy.sharding` of a function argument's (or result's) attribute
        dictionary, None when it has none. Arguments repeat a few dictionaries
        (weights of the same sharding): each is read once."""
        sharding = self._dict_shardings.get(attrs, _UNKNOWN)
        if sharding is _UNKNOWN:
            d = ir.DictAttr(attrs)
            sharding = TensorSharding.from_attr(d["sdy.sharding"]) if "sdy.sharding" in d else None
            self._dict_shardings[attrs] = sharding
        return sharding

    def add_op_row(self, op, name: str, func: str, parent: _OpRead | None = None) -> int:
        """The op's row, and where it is (its parent's open region) unless it is a function."""
        f = self.facts
        op_id = len(f.ops)
        f.ops.append(op)
        f.relations["op"].append((op_id, name, func, op_id))
        if parent is not None:
            f.relations["op_in"].append((op_id, parent.op_id, parent.region))
        return op_id

    def add_body(self, fn, func: str, root: _OpRead) -> None:
        """The rows of every op nested in `fn`, read from one list of them
        (pre-order, with their names: `names_within`, e.g. the census's).

        They come out in the order of a recursive walk: an op's head rows (op,
        operands, results) before those of the ops nested in it, its block
        arguments as each block starts, region yields as each block ends, and
        its tail rows (shardings, kind, tensors, rule) after all of them.
        `open_` holds the ops whose nested ops are being read.

        Ops are many, and a call per op and per value costs: a common op
        (OpKind.common: no regions, no rows of its kind, a rule keyed by its
        types and attributes) of one result is read in one call,
        add_common_op. Any other op is read the plain way (add_op_head, then
        add_op_tail when it is complete): add_body_plain reads every op so,
        the reference tests/facts/test_extract.py checks this walk against."""
        open_ = [root]
        if not self.next_block(root):
            return
        within, names = self._names_within(fn)
        kinds = self._kinds
        for op, name in zip(islice(within, 1, None), islice(names, 1, None)):   # (the first one is fn)
            kind = kinds.get(name) or self.kind_of(op, name)
            operands = self.add_common_op(op, name, kind, func, open_[-1]) if kind.common else None
            if operands is not None:   # (read)
                top = open_[-1]
                top.left -= 1
                if not top.left and self.end_block(operands, open_):
                    self.close(open_.pop(), open_)
                continue
            read = self.add_op_head(op, name, func, open_[-1])
            if read.blocks and self.next_block(read):
                open_.append(read)
            else:
                self.close(read, open_)

    def add_body_plain(self, fn, func: str, root: _OpRead) -> None:
        """add_body's rows, in its order, every op read the plain way."""
        open_ = [root]
        if not self.next_block(root):
            return
        within, names = self._names_within(fn)
        for op, name in zip(islice(within, 1, None), islice(names, 1, None)):   # (the first one is fn)
            read = self.add_op_head(op, name, func, open_[-1])
            if read.blocks and self.next_block(read):
                open_.append(read)
            else:
                self.close(read, open_)

    def add_common_op(self, op, name: str, kind: OpKind, func: str, parent: _OpRead) -> list[int] | None:
        """The rows of a common op of one result (add_body), as add_op_head
        and add_op_tail write them, and its operands' ids; None, and no rows,
        when it has a user rule, an operand not met or a result met before,
        or another count of results (the plain way then reads it). On
        transformer_L48 (at propagation) extract_facts runs 1.55x the
        instructions the plain way (711M against 459M, callgrind): the
        per-op calls, not the bindings, make the difference."""
        f, relations = self.facts, self.facts.relations
        attrs = op.attributes   # (each read goes through the bindings: once)
        result_list = op.results
        if len(result_list) != 1 or SHARDING_RULE in attrs:
            return None
        value = result_list[0]
        operands = list(map(f.value_ids.get, op.operands))
        if None in operands:
            return None
        vid = len(f.values)
        if f.value_ids.setdefault(value, vid) != vid:   # (a value hashes through the bindings: once)
            return None
        # add_op_head's rows
        op_id = len(f.ops)
        f.ops.append(op)
        relations["op"].append((op_id, name, func, op_id))
        relations["op_in"].append((op_id, parent.op_id, parent.region))
        if kind.effects:
            relations["op_trait"].append((op_id, "effects"))
        relations["op_operand"] += [(op_id, i, v) for i, v in enumerate(operands)]
        f.values.append(value)   # (new_value_ids' rows)
        t = value.type
        tid = self._type_ids.get(t)
        self._value_type_ids.append(self.type_id(t) if tid is None else tid)
        f.value_ops.append(op_id)
        relations["op_result"].append((op_id, 0, vid))
        f.op_results.append((vid,))
        if self.static_shapes and self._unpropagatable_types:
            self.check_result_types(op, [vid])
        # add_op_tail's rows
        f.tail_order.append(op_id)
        self.add_list_shardings(op, attrs, op_id, [vid])
        if kind.elementwise:
            relations["op_trait"].append((op_id, "elementwise"))
        relations["value_tensor"].append((vid, vid))
        if kind.rule != NO_RULE:   # (add_rule's rows)
            type_of = self._value_type_ids.__getitem__
            rule_id = self.keyed_rule_id(op, key_of(kind.rule, name, map(type_of, operands), (type_of(vid),), attrs))
            if rule_id is not None:
                relations["op_rule"].append((op_id, rule_id))
        return operands

    def kind_of(self, op, name: str) -> OpKind:
        kind = self._kinds.get(name)
        if kind is None:
            kind = self._kinds[name] = op_kind(op, name)
        return kind

    def add_op_head(self, op, name: str, func: str, parent: _OpRead) -> _OpRead:
        """The op's row, its operands and results, and its effects trait."""
        relations = self.facts.relations
        kind = self.kind_of(op, name)
        op_id = self.add_op_row(op, name, func, parent)
        if kind.effects:
            relations["op_trait"].append((op_id, "effects"))
        operands = self.ids_of(op.operands, func)
        relations["op_operand"].extend(zip(repeat(op_id), range(len(operands)), operands))
        results = self.result_ids(op, op_id, func)
        relations["op_result"].extend(zip(repeat(op_id), range(len(results)), results))
        self.facts.op_results.append(tuple(results))
        if self.static_shapes and self._unpropagatable_types:
            self.check_result_types(op, results)
        blocks = [(r, block) for r, region in enumerate(op.regions) for block in region.blocks] \
            if kind.may_have_regions else ()
        return _OpRead(op_id, op, name, func, kind, operands, results, blocks)

    def close(self, done: _OpRead, open_: list[_OpRead]) -> None:
        """The tail rows of `done`, then of each op whose last block `done` ends
        (as its terminator, whose operands the region yields)."""
        while True:
            self.add_op_tail(done)
            top = open_[-1]
            top.left -= 1
            if top.left or not self.end_block(done.operands, open_):
                return
            done = open_.pop()

    def end_block(self, terminator_operands: list[int], open_: list[_OpRead]) -> bool:
        """The current block of open_[-1] has ended (its terminator's operands
        given): its region_yield rows, and the next block started; True when
        none is left (the op is complete)."""
        top = open_[-1]
        if top.op is None:
            return False   # (a function's body: add_func reads its return)
        self.facts.relations["region_yield"].extend(
            (top.op_id, top.region, i, v) for i, v in enumerate(terminator_operands))
        return not self.next_block(top)

    def next_block(self, entered: _OpRead) -> bool:
        """Start the next block of `entered` that has ops (block_arg rows for
        each block on the way); False when none is left."""
        while entered.blocks:
            r, block = entered.blocks.pop(0)
            entered.region = r
            if entered.op is not None:   # (a function's arguments are added by add_func)
                for i, arg in enumerate(self.ids_of(block.arguments, entered.func)):
                    self.facts.add("block_arg", entered.op_id, r, i, arg)
            entered.left = len(block.operations)
            if entered.left:
                return True
        return False

    def check_result_types(self, op, results: list[int]) -> None:
        types = self._value_type_ids
        for vid in results:
            error = self._unpropagatable_types.get(types[vid])
            if error is not None:
                raise error_at(op, error, self.filename)

    def add_op_tail(self, read: _OpRead) -> None:
        """The op's shardings, elementwise trait, the facts of its kind
        (op_kinds.KIND_FACTS), its tensors and its rule."""
        op, kind, relations = read.op, read.kind, self.facts.relations
        self.facts.tail_order.append(read.op_id)
        attrs = op.attributes   # (each read goes through the bindings: once)
        self.add_op_sharding_rows(read, attrs)
        if kind.elementwise or (kind.elementwise is None and is_elementwise(op, read.name)):
            relations["op_trait"].append((read.op_id, "elementwise"))
        if kind.kind_facts is not None:
            kind.kind_facts(self, read, attrs)
        if kind.tensors_by_edge:
            self.add_flow_tensors(op, read.func)
        else:   # each result is its own tensor
            relations["value_tensor"].extend(zip(read.results, read.results))
        if kind.rule is not None:
            self.add_rule(read, attrs)

    def add_op_sharding_rows(self, read: _OpRead, attrs) -> None:
        """The rows of the shardings an op holds (SHARDING_RELATIONS): its
        results' `sdy.sharding` list, and those op_kinds.SHARDING_READERS
        reads for its kind."""
        self.add_list_shardings(read.op, attrs, read.op_id, read.results)
        if read.kind.shardings is not None:
            read.kind.shardings(self, read, attrs)

    def add_list_shardings(self, op, attrs, op_id: int, results: list[int]) -> None:
        """The value_sharding rows of the op's `sdy.sharding` list, if it has
        one (one sharding per result; equal lists are read once)."""
        attr = attrs.get(SHARDING)
        if attr is None:
            return
        self.facts.sharded_ops.add(op_id)
        ids = self._list_ids.get(attr)
        if ids is None:
            ids = self._list_ids[attr] = [self.add_sharding(s) for s in sharding_per_value(attr)]
        if not results:
            return   # an op with no results may carry one (e.g. a side-effecting callback)
        if len(ids) != len(results):
            raise error_at(op, f"sdy.sharding has {len(ids)} shardings for {len(results)} results", self.filename)
        self.facts.relations["value_sharding"].extend(zip(results, ids))

    def add_flow_tensors(self, op, func: str) -> None:
        """value_tensor rows for the results and regions' arguments of an op in op_kinds.TENSOR_OPS."""
        for value in flow_values(op):
            target = shardable_value(value)
            if target is not None:
                self.facts.add("value_tensor", self.value_id(value, func), self.value_id(target, func))

    def add_edge_sources(self, op, op_id: int, func: str) -> None:
        """Sources of a `sdy.data_flow_edge`: what flows into the edge's owner.
        An edge on a value that owns none (see is_edge_owner) stands for no
        data-flow op: its one source is its input, which it passes on unchanged."""
        f = self.facts
        owner = op.operands[0]
        if not is_edge_owner(owner):
            f.add("edge_source", op_id, 0, self.value_id(owner, func))
            return
        flow_op = data_flow_op_of_edge(op)
        for i, v in enumerate(edge_sources(flow_op, owner)):
            f.add("edge_source", op_id, i, self.value_id(v, func))
        if flow_op.name == "sdy.manual_computation":
            self.manual_edges.append((op_id, flow_op, int(isinstance(owner.owner, ir.Block))))

    def add_func_edges(self) -> None:
        """Sources of `sdy.func_data_flow_edge`s (their callers' operands, or
        the callee's returned value) and the manual computation of each edge."""
        f = self.facts
        op_ids = {op: i for i, op in enumerate(f.ops)} if self.manual_edges else {}   # (ops hash through the bindings)
        for op_id, mc, is_arg in self.manual_edges:
            f.add("edge_manual", op_id, op_ids[mc], is_arg)
        if not self.func_edges:
            return
        calls: dict[str, list[int]] = defaultdict(list)
        for op, callee in f.rows("call"):
            calls[callee].append(op)
        operands = defaultdict(dict)
        for op, i, v in f.rows("op_operand"):
            operands[op][i] = v
        for op_id, op, func in self.func_edges:
            operand = op.operands[0]
            if isinstance(operand.owner, ir.Block):
                if operand.owner.owner.operation.name != "func.func":
                    raise error_at(op, _FUNC_EDGE_ERROR + "be a block argument of a func op", self.filename)
                index = ir.BlockArgument(operand).arg_number
                for k, call in enumerate(calls.get(func, ())):
                    f.add("edge_source", op_id, k, operands[call][index])
            else:
                call = operand.owner
                if call.operation.name != "func.call":   # (such as an edge on an edge: Shardy's verifier rejects it too)
                    raise error_at(op, _FUNC_EDGE_ERROR + "be a result of call op", self.filename)
                callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
                if callee not in self.returns:
                    raise error_at(op, f"call to unknown function @{callee}", self.filename)
                index = ir.OpResult(operand).result_number
                f.add("edge_source", op_id, 0, self.returns[callee][2][index])

    def add_rule(self, read: _OpRead, attrs) -> None:
        """The op's op_rule row (the rules derive its rule_tensor rows). Ops
        with equal `rule_key`s (8.4k ops of a transformer have ~100) share the
        first one's rule id; ops whose rule depends on their neighbourhood (no
        key) are looked up one by one."""
        key_kind, operands, results = read.kind.rule, read.operands, read.results
        key = None   # (no key: a user rule, or a rule that looks around the op)
        if SHARDING_RULE in attrs:
            self.facts.rules_from_attributes = True
        elif key_kind == NO_RULE:
            return   # no rule, and no key to build (constants are many)
        elif key_kind != NO_KEY:
            # (type ids stand for the types in the key: ints compare without the bindings)
            type_of = self._value_type_ids.__getitem__
            key = key_of(key_kind, read.name, map(type_of, operands), map(type_of, results), attrs)
        rule_id = self.keyed_rule_id(read.op, key)
        if rule_id is not None:
            self.facts.relations["op_rule"].append((read.op_id, rule_id))

    def keyed_rule_id(self, op, key: tuple | None) -> int | None:
        """rule_id of the op, shared by the ops of an equal `key` (None: no key)."""
        rule_id = _UNKNOWN if key is None else self._rule_by_key.get(key, _UNKNOWN)
        if rule_id is _UNKNOWN:
            rule_id = self.rule_id(op)
            if key is not None:
                self._rule_by_key[key] = rule_id
        return rule_id

    def rule_id(self, op) -> int | None:
        """The id of the op's sharding rule, built; equal rules share one id and one set of facts."""
        rule = self.rules.rule(op)
        if rule is None and not known_op(op.name):
            if self.strict_rules:
                raise error_at(op, unknown_op_message(op.name), self.filename)
            self.facts.unknown_ops = True
        rule_id = None
        if rule is not None:
            rule_id = self._rule_ids.get(rule)
            if rule_id is None:
                rule_id = self._rule_ids[rule] = len(self._rule_ids)
                self.facts.rules.append(rule)
                self.add_rule_facts(rule_id, rule)
        return rule_id

    def add_rule_facts(self, rule_id: int, rule) -> None:
        relations = self.facts.relations
        rows, split_sizes = _rule_rows(rule)
        for relation, row in rows:
            relations[relation].append((rule_id, *row))
        self._split_sizes |= split_sizes


def rule_rows(rule) -> tuple[list, frozenset]:
    """A rule's fact rows, each (relation, row without the rule id), in
    order, and the sizes of its factors that are not a dimension's
    minor-most one."""
    rows, split_sizes = [], set()
    for fac, size in enumerate(rule.factor_sizes):
        rows.append(("rule_factor", (fac, size, rule.kind(fac).value)))
        if rule.is_blocked(fac):
            rows.append(("rule_blocked_factor", (fac,)))
    for t, (_, _, mapping) in enumerate(rule.tensors()):
        for d, factors in enumerate(mapping):
            for pos, fac in enumerate(factors):
                rows.append(("rule_dim_factor", (t, d, pos, fac)))
            for fac in factors[:-1]:
                split_sizes.add(rule.factor_sizes[fac])
    if rule.is_custom:
        rows.append(("custom_rule", ()))
    return rows, frozenset(split_sizes)


# rule_rows kept per rule: a run adds the rows of the same few rules (rules
# are built once per MLIR context, facts/shared.py), each extraction again.
_rule_rows = lru_cache(maxsize=10_000)(rule_rows)


def read_shardings(module: ir.Module, facts: FactSet, filename: str = "-") -> FactSet:
    """`facts` of `module` (ids kept) with their sharding rows
    (SHARDING_RELATIONS) read again from the module, where steps may have
    changed shardings and meshes in place since (a new FactSet)."""
    with module.context:
        return _Extractor(module, filename, False, False).reread(facts)


def _by_index(rows) -> defaultdict:
    """(owner, index, value) rows as owner -> values in index order (by the
    index column: the rows' own order is not relied on; sorting rows that
    come in order, as extracted, costs a comparison each)."""
    got = defaultdict(list)
    for owner, _, vid in sorted(rows):
        got[owner].append(vid)
    return got


def extract_facts(module: ir.Module, filename: str = "-", conservative: bool = False,
                  static_shapes: bool = False, names_within=None, strict_rules: bool = False,
                  rules: RuleCache | None = None, plain: bool = False) -> FactSet:
    """The module's input relations (rules/schema.dl) and the id maps back to the IR.
    `static_shapes`: an op result of a type propagation rejects (a tuple, a
    dynamic shape) is an error, with unpropagatable_type_error's message.
    `names_within(fn)`: a function and the ops nested in it, pre-order, and
    their names, list for list (e.g. a pipeline's census' `within_and_names`,
    which then serves the steps after it: the rows share its name strings);
    by default a walk. `strict_rules`: an op the rule registry does not know
    is an error at the op (else it has no rule, as in Shardy; a custom call
    of an unknown target has none either way). `rules`: the op sharding
    rules built so far for ops of this module (by rule_key, with this
    `conservative`), which it adds to. `plain`: read every op the plain
    way (add_body_plain; tests check that both give the same)."""
    with module.context:
        return _Extractor(module, filename, conservative, static_shapes, names_within, strict_rules, rules,
                          plain).run()


assert FactorKind.PASS_THROUGH.value == "pass_through"  # the kind names the rules match on
