"""Write the shardings the rules derived (relations final_*) into the IR.

Shardings repeat a lot (every activation of a layer has the same one), so
attributes are built once per distinct sharding. Op results are written one
op at a time (all results of an op in one `sdy.sharding` list), function
argument and result attributes once per function.
"""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.shardings import (DATA_FLOW_OPS, OWN_SHARDING_ATTR, SHARDING, get_sharding, set_func_shardings,
                                 set_sharding)
from sdylog.ir.types import rank_of

# Ops whose result shardings live somewhere else than the op's `sdy.sharding`
# list (set_sharding knows where).
_SPECIAL = DATA_FLOW_OPS | OWN_SHARDING_ATTR.keys() | {"sdy.func_data_flow_edge", "stablehlo.async_start"}


class _Attrs:
    """Sharding attributes built from the final_* relations, shared by equal shardings."""

    def __init__(self, engine, facts):
        self.facts = facts
        self.mesh_of = dict(_scan(engine, "final_mesh"))
        self.dims = defaultdict(dict)
        for t, d, closed, prio in _scan(engine, "final_dim"):
            self.dims[t][d] = (closed, prio)
        self.axes = defaultdict(list)
        for t, d, pos, axis, pre, size in _scan(engine, "final_dim_axis"):
            self.axes[(t, d)].append((pos, axis, pre, size))
        self.replicated, self.unreduced = defaultdict(list), defaultdict(list)
        for t, a, pre, size in _scan(engine, "final_replicated"):
            self.replicated[t].append((a, pre, size))
        for t, a, pre, size in _scan(engine, "final_unreduced"):
            self.unreduced[t].append((a, pre, size))
        self._refs: dict = {}
        self._dims: dict = {}
        self._shardings: dict = {}
        self._meshes: dict = {}
        self._open: dict = {}
        self._per_value: dict = {}

    def mesh_attr(self, name: str):
        m = self._meshes.get(name)
        if m is None:
            if name.startswith("@inline."):
                m = self.facts.meshes[name].to_attr()
            else:
                m = ir.FlatSymbolRefAttr.get(name)
            self._meshes[name] = m
        return m

    def axis(self, mesh: str, a: str, pre: int, size: int):
        key = (mesh, a, pre, size)
        ref = self._refs.get(key)
        if ref is None:
            full = self.facts.meshes[mesh].axis_sizes.get(a, pre * size)
            info = None if (pre == 1 and size == full) else sdy.SubAxisInfoAttr.get(pre, size)
            ref = self._refs[key] = sdy.AxisRefAttr.get(a, info)
        return ref

    def of(self, t: int):
        mesh = self.mesh_of[t]
        dims = []
        dims_of_t = self.dims[t]
        for d in sorted(dims_of_t):
            closed, prio = dims_of_t[d]
            rows = self.axes.get((t, d))
            if not rows:
                axes = ()
            elif len(rows) == 1:   # most sharded dimensions have one axis: nothing to sort
                axes = (rows[0][1:],)
            else:
                axes = tuple(row[1:] for row in sorted(rows))
            dims.append((axes, closed, prio))
        key = (mesh, tuple(dims), tuple(self.replicated.get(t, ())), tuple(self.unreduced.get(t, ())))
        attr = self._shardings.get(key)
        if attr is None:
            dim_attrs = []
            for axes, closed, prio in dims:
                dk = (mesh, axes, closed, prio)
                da = self._dims.get(dk)
                if da is None:
                    da = self._dims[dk] = sdy.DimensionShardingAttr.get(
                        [self.axis(mesh, *x) for x in axes], bool(closed), None if prio < 0 else prio)
                dim_attrs.append(da)
            attr = self._shardings[key] = sdy.TensorShardingAttr.get(
                self.mesh_attr(mesh), dim_attrs, [self.axis(mesh, *x) for x in key[2]],
                [self.axis(mesh, *x) for x in key[3]])
        return attr

    def per_value(self, shardings: list):
        """The `sdy.sharding` list attribute: ops repeat the same lists."""
        key = tuple(shardings)
        a = self._per_value.get(key)
        if a is None:
            a = self._per_value[key] = sdy.TensorShardingPerValueAttr.get(shardings)
        return a

    def open_on(self, t: int, rank: int):
        """A fully open sharding of the given rank on tensor t's mesh."""
        mesh = self.mesh_of[t]
        key = (mesh, rank)
        a = self._open.get(key)
        if a is None:
            dim = sdy.DimensionShardingAttr.get([], False)
            a = self._open[key] = sdy.TensorShardingAttr.get(self.mesh_attr(mesh), [dim] * rank, [], [])
        return a


# The derived relations write_back reads (rules/propagation/result.dl): all a
# propagation run must derive when nothing else will read the engine.
WRITE_BACK_RELATIONS = ["final_mesh", "final_dim", "final_dim_axis", "final_replicated",
                        "final_unreduced", "final_value", "final_func_result"]


def _scan(engine, relation: str):
    assert relation in WRITE_BACK_RELATIONS, relation
    scan = getattr(engine, "scan", None)
    return scan(relation) if scan is not None else engine.read(relation)


def write_back(module, engine, facts, options) -> None:
    attrs = _Attrs(engine, facts)
    args = defaultdict(dict)      # func op -> argument index -> sharding
    by_op = defaultdict(dict)     # plain op id -> result index -> sharding
    # Where each value lives, from the facts (no IR access): op results by
    # (op id, index), op names by id; anything else is a block argument.
    result_of = {v: (op, i) for op, i, v in facts.rows("op_result")}
    op_names = {row[0]: row[1] for row in facts.rows("op")}
    for v, t in _scan(engine, "final_value"):
        new = attrs.of(t)
        if v in facts.func_args:
            func, i = facts.func_args[v]
            args[func][i] = new
            continue
        where = result_of.get(v)
        if where is None or op_names[where[0]] in _SPECIAL:
            value = facts.values[v]
            old = get_sharding(value)
            if old is None or old != new:
                set_sharding(value, new)
        else:
            by_op[where[0]][where[1]] = (new, t)
    for op_id, by_index in by_op.items():
        _set_result_shardings(facts.ops[op_id], by_index, attrs)
    results = defaultdict(dict)
    for _, _, t in _scan(engine, "final_func_result"):
        func, i = facts.func_results[t]
        results[func][i] = attrs.of(t)
    for func, by_index in args.items():
        set_func_shardings(func, by_index)
    for func, by_index in results.items():
        set_func_shardings(func, by_index, results=True)


def _set_result_shardings(op, by_index: dict, attrs: _Attrs) -> None:
    """An op's `sdy.sharding` list with the given entries (others kept, or
    fully open when the op had none)."""
    old = list(sdy.TensorShardingPerValueAttr(op.attributes[SHARDING]).shardings) \
        if SHARDING in op.attributes else None
    if old is not None and all(old[i] == s for i, (s, _) in by_index.items()):
        return
    if old is None:
        _, t = next(iter(by_index.values()))
        results = list(op.results)
        # Fully open entries for the results the rules left alone (types read only for them).
        old = [None if i in by_index else attrs.open_on(t, rank_of(r)) for i, r in enumerate(results)]
    for i, (s, _) in by_index.items():
        old[i] = s
    op.attributes[SHARDING] = attrs.per_value(old)
