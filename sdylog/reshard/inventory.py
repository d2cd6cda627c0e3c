"""What a module needs to become a partitioned program: the reshards and
collectives `-sdy-insert-explicit-reshards=enable-full-version=true` would
insert into it, with their bytes per device. For `sdylog run`'s report and
--report, `sdylog query` and `sdylog explain`.

One evaluation of rules/reshard.dl on the module (two, as the pass, on a
concatenate of resharded slices: driver.with_walk_rules; nothing written:
the module is not changed), its inventory (rules/reshard/inventory.dl) costed by
sdylog/reshard/costs.py; the engine keeps every relation for queries.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.model.axis import AxisRef
from sdylog.model.sharding import DimSharding

KINDS = ("reshard", "all_reduce", "replicated_to_unreduced", "sharded_to_unreduced")


@dataclass
class Inserted:
    """One op the pass would insert."""
    kind: str                  # a KINDS entry
    op: str                    # the op it is for, e.g. "stablehlo.dot_general"
    location: str | None       # that op's source location
    place: str                 # "operand" (before the op), "result" (after it), "use"
    index: int                 # the operand, result or use index
    mesh: str | None
    from_sharding: str | None  # what it reads, e.g. '[{"x"}, {}]'
    to_sharding: str | None    # a reshard's target
    axes: str | None           # a collective's axes, e.g. '{"x"}'
    bytes_per_device: int | None   # None: not costed (between meshes)
    op_id: int = -1
    value: int = -1
    to_mesh: str | None = None     # a reshard onto another mesh (another device order, or other axes): that mesh

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("op_id", "value")}


@dataclass(frozen=True)
class NeededRows:
    """The inventory rules' rows (rules/reshard/inventory.dl), read once for
    the costs and the report. An inserted op is keyed by x = (o, step, i);
    `needed` rows are (x, kind, place, v), in the pass's order (op o, its
    step's order, i); the axis rows of x are (d, p, axis, pre, size); all
    sorted."""
    needed: list
    mesh: dict          # x -> its mesh
    target_mesh: dict   # x -> the mesh of another device order it goes to
    cross_mesh: dict    # x -> the mesh of other axes it goes to (not costed)
    from_axes: dict     # x -> the axis rows of what it reads
    to_axes: dict       # x -> the axis rows of a reshard's target
    axes: dict          # x -> the (p, axis, pre, size) rows of a collective over a list of axes
    dim_axes: dict      # x -> the axis rows of a collective per dimension (sharded_to_unreduced)

    @staticmethod
    def read(engine) -> "NeededRows":
        order = dict(engine.select("needed_step", "step", "order"))
        needed = [((o, step, i), kind, place, v)
                  for o, step, i, kind, place, v in engine.select("needed", "o", "step", "i", "kind", "place", "v")]
        needed.sort(key=lambda r: (r[0][0], order[r[0][1]], r[0][2]))
        return NeededRows(
            needed,
            by_key(engine.select("needed_mesh", "o", "step", "i", "m"), one=True),
            by_key(engine.select("needed_target_mesh", "o", "step", "i", "m"), one=True),
            by_key(engine.select("needed_cross_mesh", "o", "step", "i", "m"), one=True),
            by_key(engine.select("needed_from_axis", "o", "step", "i", "d", "p", "axis", "pre", "size", ordered=True)),
            by_key(engine.select("needed_to_axis", "o", "step", "i", "d", "p", "axis", "pre", "size", ordered=True)),
            by_key(engine.select("needed_axis", "o", "step", "i", "p", "axis", "pre", "size", ordered=True)),
            by_key(engine.select("needed_dim_axis", "o", "step", "i", "d", "p", "axis", "pre", "size", ordered=True)))


def by_first(rows) -> dict:
    """The rows by their first column: first -> [the rest of each row]."""
    out: dict = defaultdict(list)
    for first, *rest in rows:
        out[first].append(tuple(rest))
    return out


def by_key(rows, one: bool = False) -> dict:
    """The rows by their key (o, step, i), the first three columns: key ->
    [the rest of each row] (`one`: key -> the one other column)."""
    if one:
        return {(o, step, i): value for o, step, i, value in rows}
    out: dict = defaultdict(list)
    for o, step, i, *rest in rows:
        out[(o, step, i)].append(tuple(rest))
    return out


@dataclass
class Inventory:
    engine: object = None          # the reshard rules' engine (every relation), None on error
    facts: object = None
    items: list[Inserted] = field(default_factory=list)
    error: str | None = None       # what stops the pass on this module (Shardy rejects it)


def needed_inventory(module, ctx) -> Inventory:
    """The full version's decisions on `module` (not written) with their
    costs; an Inventory with `error` when the pass would stop on it."""
    from sdylog.reshard.costs import cost_needed
    from sdylog.reshard.driver import (ReshardOptions, evaluate, first_error, reshard_program, run_facts,
                                       with_walk_rules)

    options = ReshardOptions(True)
    try:
        decisions = evaluate(reshard_program(), module, ctx, lambda f: run_facts(options, f))
        decisions = with_walk_rules(decisions, module, ctx, options, None)
        first_error(decisions, decisions.engine.select("reshard_error", "o", "message"), ctx)
    except SdylogError as e:
        return Inventory(error=str(e).splitlines()[0])
    engine, facts = decisions.engine, decisions.facts
    needed = NeededRows.read(engine)
    costs = cost_needed(needed, engine, facts)
    return Inventory(engine, facts, _items(needed, facts, costs, getattr(ctx, "filename", "-")))


def _items(needed: NeededRows, facts, costs: dict, filename: str) -> list[Inserted]:
    ranks = {v: rank for v, _f, rank, _t in facts.rows("value")}
    out = []
    for x, kind, place, v in needed.needed:
        o, _step, i = x
        op = facts.ops[o]
        m = needed.mesh.get(x)
        to_mesh = needed.target_mesh.get(x, needed.cross_mesh.get(x))
        sizes = facts.meshes[m].axis_sizes if m in facts.meshes else {}
        to_sizes = facts.meshes[to_mesh].axis_sizes if to_mesh in facts.meshes else sizes
        from_s = _dims_text(needed.from_axes.get(x, ()), ranks.get(v, 0), sizes)
        to_s = _dims_text(needed.to_axes.get(x, ()), ranks.get(v, 0), to_sizes) if kind == "reshard" else None
        coll = needed.axes.get(x, ())
        if kind == "sharded_to_unreduced":
            coll_text = _dims_text(needed.dim_axes.get(x, ()), ranks.get(v, 0), sizes)
        elif coll:
            coll_text = axes_text([(a, pre, z) for _p, a, pre, z in sorted(coll)], sizes)
        else:
            coll_text = None
        out.append(Inserted(kind, op.name, format_location(op, filename), place, i, m, from_s, to_s,
                            coll_text, costs.get(x), o, v, to_mesh))
    return out


def _ref(a: str, pre: int, z: int, sizes: dict) -> AxisRef:
    return AxisRef.of_interval(a, pre, pre * z, sizes.get(a, pre * z))


def axes_text(axes, sizes: dict) -> str:
    """`{"x", "y":(1)2}`: axes given as (name, pre, size) rows of the rules,
    in order, on a mesh of `sizes`."""
    return str(DimSharding(tuple(_ref(a, pre, z, sizes) for a, pre, z in axes)))


def _dims_text(rows, rank: int, sizes: dict) -> str:
    dims = [[] for _ in range(rank)]
    for d, p, a, pre, z in sorted(rows):
        if 0 <= d < rank:
            dims[d].append(_ref(a, pre, z, sizes))
    return "[" + ", ".join(str(DimSharding(tuple(refs))) for refs in dims) + "]"
