"""Write the reshard rules' decisions (rules/reshard/writes.dl) into the IR.

Nothing is decided here: each derived row says which op to insert where,
with which sharding; this module builds the attributes and ops. Ops are
written in the order Shardy's pass visits them (post-order: an op's nested
ops before it), so that ops inserted after a value's definition for one op
sit where Shardy puts them.

Around an op o, Shardy's order: operand reshards right before o; after o,
the result reshards (back to the result's own sharding, taking its uses),
then the all-reduces before them (each takes every use of its result,
the reshard's included): o, all-reduces, reshards.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op, ip_after_op
from sdylog.ir.shardings import fully_closed_like, func_result_sharding, get_sharding, set_sharding
from sdylog.ir.types import rank_of
from sdylog.model.axis import AxisRef
from sdylog.model.sharding import DimSharding, TensorSharding

# The relations the writer reads (a run deriving only what the writer needs asks for these).
WRITER_RELATIONS = ["reshard_operand", "reshard_result", "working_dim_axis", "working_dim_closed",
                    "working_keeps", "all_reduce_axis", "op_mesh", "reshard_return"]


@dataclass
class _OpWrites:
    """What the rules decided for one op."""
    operands: list = field(default_factory=list)          # operand indexes to reshard
    results: list = field(default_factory=list)           # (result index, tensor index, restore sharding id)
    all_reduce: list = field(default_factory=list)        # (position, axis, pre, size)


@dataclass
class WriteCounts:
    reshards: int = 0
    all_reduces: int = 0


class _Shardings:
    """Sharding attributes from the derived rows and the facts' shardings."""

    def __init__(self, engine, facts):
        self.facts = facts
        self.symbols = set(facts.mesh_symbols)
        self.dim_axes: dict = defaultdict(list)   # (o, j) -> [(d, p, axis, pre, size)]
        for o, j, d, p, a, pre, z in engine.scan("working_dim_axis"):
            self.dim_axes[(o, j)].append((d, p, a, pre, z))
        self.closed: dict = defaultdict(set)      # (o, j) -> closed dimensions
        for o, j, d in engine.scan("working_dim_closed"):
            self.closed[(o, j)].add(d)
        self.keeps = {(o, j): s for o, j, s in engine.scan("working_keeps")}
        self.op_mesh = dict(engine.scan("op_mesh"))

    def mesh(self, name: str):
        """What a TensorSharding names its mesh by: the symbol, or the inlined mesh."""
        return name if name in self.symbols else self.facts.meshes[name]

    def axis(self, mesh_name: str, a: str, pre: int, size: int) -> AxisRef:
        full = self.facts.meshes[mesh_name].axis_sizes[a]
        return AxisRef.of_interval(a, pre, pre * size, full)

    def working(self, o: int, j: int, rank: int) -> ir.Attribute:
        """Tensor j's working sharding, on op o's mesh."""
        m = self.op_mesh[o]
        dims = [[] for _ in range(rank)]
        for d, p, a, pre, z in sorted(self.dim_axes.get((o, j), ())):
            dims[d].append(self.axis(m, a, pre, z))
        closed = self.closed.get((o, j), set())
        kept = self.keeps.get((o, j))
        base = self.facts.shardings[kept] if kept is not None else None
        return TensorSharding(self.mesh(m), tuple(DimSharding(tuple(axes), d in closed) for d, axes in enumerate(dims)),
                              base.replicated if base else (), base.unreduced if base else ()).to_attr()

    def closed_replicated(self, o: int, rank: int, closed: bool = True) -> ir.Attribute:
        return TensorSharding.replicated_on(self.mesh(self.op_mesh[o]), rank, closed).to_attr()

    def axis_list(self, o: int, refs) -> ir.Attribute:
        m = self.op_mesh[o]
        return ir.Attribute.parse("#sdy<axis_ref_list{" + ", ".join(str(self.axis(m, *r)) for r in refs) + "}>")


def read_writes(engine) -> dict[int, _OpWrites]:
    writes: dict[int, _OpWrites] = defaultdict(_OpWrites)
    for o, i in engine.scan("reshard_operand"):
        writes[o].operands.append(i)
    for o, i, j, s in engine.scan("reshard_result"):
        writes[o].results.append((i, j, s))
    for o, p, a, pre, z in engine.scan("all_reduce_axis"):
        writes[o].all_reduce.append((p, a, pre, z))
    return writes


def post_order(facts, op_ids) -> list[int]:
    """`op_ids` in Shardy's walk order: an op after the ops nested in it,
    before the ops after it (pre-order ids: an op's nested ops follow it)."""
    parent = {o: p for o, _, _, p, _, _ in facts.rows("op")}
    end = {}
    depth = {}
    for o in sorted(parent):
        p = parent[o]
        depth[o] = depth.get(p, -1) + 1
    for o in sorted(parent, reverse=True):
        e = max(o, end.get(o, o))
        end[o] = e
        p = parent[o]
        if p >= 0:
            end[p] = max(end.get(p, p), e)
    return sorted(op_ids, key=lambda o: (end[o], -depth[o]))


def write_reshards(module, engine, facts) -> WriteCounts:
    """Insert the reshards and all-reduces the rules decided."""
    writes = read_writes(engine)
    returns: dict[str, list] = defaultdict(list)   # function -> [(result index, target sharding id)]
    for f, i, _s, t in engine.scan("reshard_return"):
        returns[f].append((i, t))
    counts = WriteCounts()
    if writes:
        shardings = _Shardings(engine, facts)
        for o in post_order(facts, writes):
            _write_op(facts.ops[o], o, writes[o], shardings, counts)
    if returns:
        funcs = {name: o for o, kind, name, parent, _, _ in facts.rows("op") if kind == "func.func"}
        for f, targets in returns.items():
            _write_return(facts.ops[funcs[f]], sorted(targets), counts)
    return counts


def _write_return(func, targets, counts: WriteCounts) -> None:
    """Reshards right before the function's return, to its result shardings."""
    func = func.operation if hasattr(func, "operation") else func
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    for i, t in targets:
        operand = ret.operands[i]
        target = func_result_sharding(func, i) if t >= 0 else fully_closed_like(get_sharding(operand))
        reshard = create_op("sdy.reshard", results=[operand.type], operands=[operand],
                            attributes={"sharding": target}, loc=operand.location, ip=ir.InsertionPoint(ret))
        ret.operands[i] = reshard.result
        counts.reshards += 1


def _write_op(op, o: int, w: _OpWrites, shardings: _Shardings, counts: WriteCounts) -> None:
    op = op.operation if hasattr(op, "operation") else op
    for i in sorted(w.operands):
        operand = op.operands[i]
        sharding = shardings.working(o, i, rank_of(operand))
        reshard = create_op("sdy.reshard", results=[operand.type], operands=[operand],
                            attributes={"sharding": sharding}, loc=op.location, ip=ir.InsertionPoint(op))
        op.operands[i] = reshard.result
        counts.reshards += 1
    after = ip_after_op(op)
    current = {}   # result index -> its sharding once resharded
    for i, j, s in sorted(w.results):
        result = op.results[i]
        rank = rank_of(result)
        restore = get_sharding(result) if s >= 0 else shardings.closed_replicated(o, rank, closed=s == -1)
        current[i] = shardings.working(o, j, rank)
        set_sharding(result, current[i])
        reshard = create_op("sdy.reshard", results=[result.type], operands=[result],
                            attributes={"sharding": restore}, loc=op.location, ip=after)
        result.replace_all_uses_except(reshard.result, reshard)
        counts.reshards += 1
    if w.all_reduce:
        axes = shardings.axis_list(o, [r[1:] for r in sorted(w.all_reduce)])
        at = ip_after_op(op)
        for i, result in enumerate(op.results):
            out = current.get(i) or get_sharding(result) or shardings.closed_replicated(o, rank_of(result))
            all_reduce = create_op("sdy.all_reduce", results=[result.type], operands=[result],
                                   attributes={"reduction_axes": axes, "out_sharding": out},
                                   loc=op.location, ip=at)
            result.replace_all_uses_except(all_reduce.result, all_reduce)
            counts.all_reduces += 1
