"""Write the reshard rules' decisions (rules/reshard/writes.dl) into the IR.

Nothing is decided here: each derived row says which op to insert where,
with which axes and shardings; this module builds the attributes and ops.
Ops are visited in the order Shardy's pass visits them (post-order: an
op's nested ops before it), then each function's return, so that ops
inserted at one place for several decisions sit in Shardy's order:

- around an op with a sharding rule: the all-reduces of unreduced operands,
  then the operand reshards, right before it; after it the result reshards
  (back to the result's own sharding, taking its uses), then the
  all-reduces of reduction factors before them: op, all-reduces, reshards;
- at a site (a use brought to a target sharding: an edge source of a
  data-flow op, a call operand, right after the value's definition; a
  function result, right before the return): an all-reduce, a reshard, a
  replicated-to-unreduced, a sharded-to-unreduced, a reshard, those the
  rules chose, in that order. An existing reshard made unreduced
  collectives goes.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from jaxlib.mlir import ir

from sdylog.facts.extract import post_order
from sdylog.ir.collectives import axis_list_attr, axis_lists_attr, create_collective, create_reshard
from sdylog.ir.rewrite import ip_after_op, ip_after_value
from sdylog.ir.locations import with_source
from sdylog.ir.shardings import get_sharding, set_sharding
from sdylog.ir.types import rank_of
from sdylog.model.axis import AxisRef
from sdylog.model.sharding import DimSharding, TensorSharding

# The relations the writer reads (a run deriving only what the writer needs asks for these).
WRITER_RELATIONS = [
    "writes_something", "reshard_operand", "reshard_result", "reshard_result_replicated", "working_dim_axis",
    "working_dim_closed", "working_keeps",
    "all_reduce_axis", "op_mesh", "operand_all_reduce_axis", "operand_unreduced_after",
    "site", "site_target", "site_erases_manual", "site_place", "site_owner", "site_synthetic", "site_all_reduce",
    "site_unreduced_after", "site_mid_reshard", "site_mid_keeps", "site_r2u", "site_r2u_unreduced", "site_s2u",
    "site_reshard", "reshard_to_unreduced", "func_return_op", "sum_operand_site",
    "single_device_worked", "single_device_mesh", "global_mesh", "single_device_operand",
    "single_device_result_reshard", "single_device_token", "reshard_error",
]


@dataclass
class WriteCounts:
    reshards: int = 0
    all_reduces: int = 0
    unreduced_ops: int = 0     # replicated-to-unreduced and sharded-to-unreduced
    wrote: bool = False        # whether the module changed at all (census.PRESERVED when not)


def _grouped(rows, key_len: int) -> dict:
    """Rows by their first key_len columns, the rest sorted."""
    out = defaultdict(list)
    for row in rows:
        out[row[:key_len]].append(row[key_len:])
    for rows in out.values():
        rows.sort()
    return out


_AXIS = ("p", "axis", "pre", "size")   # an axis row's columns: position, axis, pre-size, size


class _Decisions:
    """The rows the writer reads, by op and site: those that say what to
    visit, and the rest once something is to be written (`read_writes`):
    most reshard steps decide nothing."""

    def __init__(self, engine):
        select = self.select = engine.select
        # what to visit: ops with reshards, all-reduces or single-device work; sites with ops to write
        self.operand_reshards = _grouped(select("reshard_operand", "o", "i"), 1)             # (o,) -> [(i,)]
        self.result_reshards = _grouped(select("reshard_result", "o", "i", "j"), 1)           # (o,) -> [(i, j)]
        self.all_reduce = _grouped(select("all_reduce_axis", "o", *_AXIS), 1)                # (o,) -> [axis]
        self.operand_all_reduce = _grouped(select("operand_all_reduce_axis", "o", "i", *_AXIS), 2)   # (o, i) -> [axis]
        self.single_device_worked = {o for (o,) in select("single_device_worked", "o")}
        self.sites = {(u, i): v for u, i, v in select("site", "u", "i", "v")}
        self.return_ops = {f: u for f, u in select("func_return_op", "f", "u")}
        self.site_all_reduce = _grouped(select("site_all_reduce", "u", "i", *_AXIS), 2)
        self.mid = {(u, i) for u, i in select("site_mid_reshard", "u", "i")}
        self.r2u = _grouped(select("site_r2u", "u", "i", *_AXIS), 2)
        self.s2u = _grouped(select("site_s2u", "u", "i", "d", "q", "axis", "pre", "size"), 2)   # (u, i) -> [(d, q, *)]
        self.site_reshard = {(u, i) for u, i in select("site_reshard", "u", "i")}
        # ordinary ops' operand sites (an operand turned unreduced as the op's result), written with the op
        self.sum_sites = _grouped(select("sum_operand_site", "o", "i"), 1)               # (o,) -> [(i,)]
        self.sum_site_keys = {(o, i) for (o,), rows in self.sum_sites.items() for (i,) in rows}
        # op -> its edge sites in Shardy's order; ops whose visit writes sites
        self.owner_sites = defaultdict(list)
        for u, i, o, kind, k, m in select("site_owner", "u", "i", "o", "kind", "k", "m"):
            self.owner_sites[o].append((kind, k, m, u, i))
        for sites in self.owner_sites.values():
            sites.sort()

    def read_writes(self) -> None:
        """The rows that say what to write."""
        select = self.select
        self.dim_axes = _grouped(select("working_dim_axis", "o", "j", "d", *_AXIS), 2)   # (o, j) -> [(d, *axis)]
        self.closed = _grouped(select("working_dim_closed", "o", "j", "d"), 2)               # (o, j) -> [(d,)]
        self.keeps = {(o, j): s for o, j, s in select("working_keeps", "o", "j", "s")}
        self.op_mesh = dict(select("op_mesh", "o", "m"))
        self.operand_unreduced = _grouped(select("operand_unreduced_after", "o", "i", *_AXIS), 2)
        self.result_replicated = {(o, i): c for o, i, c in select("reshard_result_replicated", "o", "i", "closed")}
        self.targets = {(u, i): t for u, i, t in select("site_target", "u", "i", "t")}
        self.erases = {(u, i): mc for u, i, mc in select("site_erases_manual", "u", "i", "mc")}
        self.place = {(u, i): p for u, i, p in select("site_place", "u", "i", "place")}
        self.synthetic = {(u, k): (m, c) for u, k, m, c in select("site_synthetic", "u", "k", "m", "closed")}
        self.site_unreduced = _grouped(select("site_unreduced_after", "u", "i", *_AXIS), 2)
        self.mid_keeps = _grouped(select("site_mid_keeps", "u", "i", "d"), 2)
        self.r2u_unreduced = _grouped(select("site_r2u_unreduced", "u", "i", *_AXIS), 2)
        self.reshard_to_unreduced = {u for (u,) in select("reshard_to_unreduced", "u")}
        self.single_device = dict(select("single_device_mesh", "o", "m"))
        self.global_mesh = next((m for (m,) in select("global_mesh", "m")), None)
        self.single_device_operands = _grouped(select("single_device_operand", "o", "i", "through"), 1)
        self.single_device_results = _grouped(select("single_device_result_reshard", "o", "i", "then"), 1)
        self.single_device_tokens = _grouped(select("single_device_token", "o", "i"), 1)

    def site_writes(self, key) -> bool:
        """Site `key` has something to write."""
        return (key in self.site_all_reduce or key in self.mid or key in self.r2u or key in self.s2u
                or key in self.site_reshard)

    def visited_ops(self) -> set:
        ops = set(self.operand_reshards) | set(self.result_reshards) | set(self.all_reduce)
        ops |= {(o,) for o, _ in self.operand_all_reduce}
        ops |= {(o,) for o in self.single_device_worked}
        ops |= {(o,) for o, sites in self.owner_sites.items() if any(self.site_writes((u, i)) for *_, u, i in sites)}
        ops |= {o for o, sites in self.sum_sites.items() if any(self.site_writes((o[0], i)) for (i,) in sites)}
        return {o for (o,) in ops}


class _Shardings:
    """Sharding attributes built from the rows and the facts' shardings."""

    def __init__(self, decisions: _Decisions, facts):
        self.d = decisions
        self.facts = facts
        self.symbols = set(facts.mesh_symbols)

    def mesh(self, name: str):
        """What a TensorSharding names its mesh by: the symbol, or the inlined mesh."""
        return name if name in self.symbols else self.facts.meshes[name]

    def mesh_name(self, sharding: TensorSharding) -> str:
        if isinstance(sharding.mesh, str):
            return sharding.mesh
        return next(n for n, m in self.facts.meshes.items() if m == sharding.mesh)

    def axis(self, mesh_name: str, a: str, pre: int, size: int) -> AxisRef:
        full = self.facts.meshes[mesh_name].axis_sizes[a]
        return AxisRef.of_interval(a, pre, pre * size, full)

    def axes(self, mesh_name: str, rows) -> tuple:
        return tuple(self.axis(mesh_name, *r[-3:]) for r in rows)

    def working(self, o: int, j: int, rank: int, unreduced=None) -> ir.Attribute:
        """Tensor j's working sharding, on op o's mesh (with the unreduced axes given, when any)."""
        m = self.d.op_mesh[o]
        dims = [[] for _ in range(rank)]
        for d, p, a, pre, z in self.d.dim_axes.get((o, j), ()):
            dims[d].append(self.axis(m, a, pre, z))
        closed = {d for (d,) in self.d.closed.get((o, j), ())}
        kept = self.d.keeps.get((o, j))
        base = self.facts.shardings[kept] if kept is not None else None
        if unreduced is None:
            unreduced = base.unreduced if base else ()
        return TensorSharding(self.mesh(m), tuple(DimSharding(tuple(axes), d in closed) for d, axes in enumerate(dims)),
                              base.replicated if base else (), tuple(unreduced)).to_attr()

    def replicated(self, mesh_name: str, rank: int, closed: bool = True) -> ir.Attribute:
        return TensorSharding.replicated_on(self.mesh(mesh_name), rank, closed).to_attr()

    def target(self, key, value) -> TensorSharding | None:
        """The site's target sharding (manual axes erased where the site says), None for none."""
        if key in self.d.synthetic:
            m, closed = self.d.synthetic[key]
            return TensorSharding.replicated_on(self.mesh(m), rank_of(value), bool(closed))
        t = self.d.targets.get(key)
        if t is None:
            return None
        target = self.facts.shardings[t]
        mc = self.d.erases.get(key)
        if mc is not None:
            from sdylog.partition.ir_shardings import manual_axes, without_axes
            target = without_axes(target, manual_axes(self.facts.ops[mc].attributes["manual_axes"]))
        return target


def write_reshards(module, engine, facts) -> WriteCounts:
    """Insert the reshards and collectives the rules decided (nothing read
    but writes_something when the rules say there is nothing to write)."""
    counts = WriteCounts()
    if not engine.size("writes_something"):
        return counts
    return write_decisions(engine, facts, counts)


def write_decisions(engine, facts, counts: WriteCounts) -> WriteCounts:
    """write_reshards without looking at writes_something first (the plain
    version: it finds nothing to visit when there is nothing to write)."""
    d = _Decisions(engine)
    visited = d.visited_ops()
    returns = {u for u in d.return_ops.values()}
    counts.wrote = bool(visited) or any(d.site_writes(key) for key in d.sites if key[0] in returns)
    if not counts.wrote:
        return counts
    d.read_writes()
    shardings = _Shardings(d, facts)
    for o in post_order(facts, visited):
        op = facts.ops[o]
        op = op.operation if hasattr(op, "operation") else op
        if o in d.reshard_to_unreduced:
            new = _write_site(facts, d, shardings, (o, 0), counts)
            op.result.replace_all_uses_with(new)
            op.erase()
        elif o in d.owner_sites:
            for *_, u, i in d.owner_sites[o]:
                _write_site(facts, d, shardings, (u, i), counts)
        else:
            _write_op(facts, op, o, d, shardings, counts)
    for f, u in d.return_ops.items():
        for i in sorted(i for (u2, i) in d.sites if u2 == u):
            _write_site(facts, d, shardings, (u, i), counts)
    return counts


def _write_op(facts, op, o: int, d: _Decisions, shardings: _Shardings, counts: WriteCounts) -> None:
    _write_operand_all_reduces(op, o, d, shardings, counts)
    if o in d.single_device_worked:
        _write_single_device(op, o, d, shardings, counts)
        return
    _write_working_shardings(op, o, d, shardings, counts)
    for (i,) in sorted(d.sum_sites.get((o,), ())):
        _write_site(facts, d, shardings, (o, i), counts)


def _write_operand_all_reduces(op, o: int, d: _Decisions, shardings: _Shardings, counts: WriteCounts) -> None:
    for i in sorted(i for (o2, i) in d.operand_all_reduce if o2 == o):   # (in operand order, as Shardy)
        operand = op.operands[i]
        source = TensorSharding.from_attr(get_sharding(operand))
        m = shardings.mesh_name(source)
        rest = shardings.axes(m, d.operand_unreduced.get((o, i), ()))
        out = replace(source, unreduced=rest).to_attr()
        axes = axis_list_attr(shardings.axes(m, d.operand_all_reduce[(o, i)]))
        new = create_collective("sdy.all_reduce", operand, out, axes, loc=op.location, ip=ir.InsertionPoint(op))
        op.operands[i] = new.result
        counts.all_reduces += 1


def reshard_operand(op, i: int, sharding: ir.Attribute) -> None:
    """Operand i of `op` through a new sdy.reshard to `sharding`, right
    before `op`, on this use only."""
    operand = op.operands[i]
    reshard = create_reshard(operand, sharding, loc=op.location, ip=ir.InsertionPoint(op))
    op.operands[i] = reshard.result


def reshard_result_back(op, result, sharding: ir.Attribute, ip: ir.InsertionPoint) -> None:
    """A new sdy.reshard of `result` (of `op`, which now works on another
    sharding) back to `sharding` at `ip`, taking every other use of it."""
    reshard = create_reshard(result, sharding, loc=op.location, ip=ip)
    result.replace_all_uses_except(reshard.result, reshard)


def _write_working_shardings(op, o: int, d: _Decisions, shardings: _Shardings, counts: WriteCounts) -> None:
    for (i,) in d.operand_reshards.get((o,), ()):
        operand = op.operands[i]
        unreduced = None
        if (o, i) in d.operand_all_reduce:
            unreduced = shardings.axes(d.op_mesh[o], d.operand_unreduced.get((o, i), ()))
        reshard_operand(op, i, shardings.working(o, i, rank_of(operand), unreduced))
        counts.reshards += 1
    after = ip_after_op(op)
    current = {}   # result index -> its sharding once resharded
    for i, j in d.result_reshards.get((o,), ()):
        result = op.results[i]
        rank = rank_of(result)
        closed = d.result_replicated.get((o, i))
        restore = get_sharding(result) if closed is None else shardings.replicated(d.op_mesh[o], rank, bool(closed))
        current[i] = shardings.working(o, j, rank)
        set_sharding(result, current[i])
        reshard_result_back(op, result, restore, after)
        counts.reshards += 1
    rows = d.all_reduce.get((o,))
    if rows:
        axes = axis_list_attr(shardings.axes(d.op_mesh[o], rows))
        at = ip_after_op(op)
        for i, result in enumerate(op.results):
            out = current.get(i) or get_sharding(result) or shardings.replicated(d.op_mesh[o], rank_of(result))
            new = create_collective("sdy.all_reduce", result, out, axes, loc=op.location, ip=at)
            result.replace_all_uses_except(new.result, new)
            counts.all_reduces += 1


def _reshard(value, sharding, loc, ip, counts: WriteCounts):
    counts.reshards += 1
    return create_reshard(value, sharding, loc=loc, ip=ip)


def _write_single_device(op, o: int, d: _Decisions, shardings: _Shardings, counts: WriteCounts) -> None:
    single = shardings.replicated(d.single_device[o], 0)
    before = ir.InsertionPoint(op)
    for i, through in d.single_device_operands.get((o,), ()):
        value = op.operands[i]
        if through:
            value = _reshard(value, shardings.replicated(d.global_mesh, rank_of(value)), op.location, before, counts).result
        op.operands[i] = _reshard(value, single, op.location, before, counts).result
    last = op
    for i, then in d.single_device_results.get((o,), ()):
        result = op.results[i]
        target = get_sharding(result)
        first = _reshard(result, shardings.replicated(d.global_mesh, rank_of(result)), op.location, ip_after_op(last),
                         counts)
        result.replace_all_uses_except(first.result, first)
        last = first
        if then:
            second = _reshard(first.result, target, op.location, ip_after_op(last), counts)
            first.result.replace_all_uses_except(second.result, second)
            last = second
    for i, _then in d.single_device_results.get((o,), ()):
        set_sharding(op.results[i], single)
    for (i,) in d.single_device_tokens.get((o,), ()):
        set_sharding(op.results[i], shardings.replicated(d.global_mesh, 0))


def _write_site(facts, d: _Decisions, shardings: _Shardings, key, counts: WriteCounts):
    """The ops at a site; the value the use then reads."""
    u, i = key
    user = facts.ops[u]
    user = user.operation if hasattr(user, "operation") else user
    value = user.operands[i]
    if not d.site_writes(key):
        return value
    ip = ir.InsertionPoint(user) if d.place[key] == "before" else ip_after_value(value)
    loc = with_source(value.location, user.location)
    source = TensorSharding.from_attr(get_sharding(value)) if get_sharding(value) is not None else None
    target = shardings.target(key, value)
    cur = value
    if key in d.site_all_reduce:
        m = shardings.mesh_name(source)
        source = replace(source, unreduced=shardings.axes(m, d.site_unreduced.get(key, ())))
        cur = create_collective("sdy.all_reduce", cur, source.to_attr(),
                                axis_list_attr(shardings.axes(m, d.site_all_reduce[key])), loc=loc, ip=ip).result
        counts.all_reduces += 1
    if key in d.r2u or key in d.s2u:
        if source is None:
            # A value with no sharding is replicated on the target's mesh
            # (targets.dl, site_bare_unreduces): it says so, as a collective's
            # operand must have a sharding.
            source = TensorSharding.replicated_on(target.mesh, rank_of(value))
            set_sharding(value, source.to_attr())
        m = shardings.mesh_name(source)
        if key in d.sum_site_keys:
            # the operand keeps the sharding the op's own reshard gave it (targets.dl, sum_operand_site)
            mid_dims, replicated = source.dims, source.replicated
        else:
            kept = {dim for (dim,) in d.mid_keeps.get(key, ())}
            mid_dims = tuple(source.dims[k] if k in kept else target.dims[k] for k in range(len(source.dims)))
            replicated = target.replicated
        if key in d.mid:
            mid = replace(source, dims=mid_dims)
            cur = create_reshard(cur, mid.to_attr(), loc=loc, ip=ip).result
            counts.reshards += 1
        if key in d.r2u:
            out = TensorSharding(source.mesh, mid_dims, replicated, shardings.axes(m, d.r2u_unreduced.get(key, ())))
            cur = create_collective("sdy.replicated_to_unreduced", cur, out.to_attr(),
                                    axis_list_attr(shardings.axes(m, d.r2u[key])), loc=loc, ip=ip).result
            counts.unreduced_ops += 1
        if key in d.s2u:
            per_dim = [[] for _ in source.dims]
            for dim, _q, a, pre, z in d.s2u[key]:
                per_dim[dim].append(shardings.axis(m, a, pre, z))
            cur = create_collective("sdy.sharded_to_unreduced", cur, target.to_attr(), axis_lists_attr(per_dim),
                                    loc=loc, ip=ip).result
            counts.unreduced_ops += 1
    if key in d.site_reshard:
        out = target if target is not None else TensorSharding.replicated_on(source.mesh, len(source.dims))
        cur = create_reshard(cur, out.to_attr(), loc=loc, ip=ip).result
        counts.reshards += 1
    if u not in d.reshard_to_unreduced:
        user.operands[i] = cur
    return cur
