"""The canonicalization patterns of Shardy's ops (its sdy/ir/canonicalization.td
and .cc) that its export passes run, by label:

* `sdy-reshard`: a reshard of a reshard used only there is one reshard;
* `sdy-collective`: collectives over no axes, and collective permutes to an
  equivalent sharding, are no-ops; an all_slice undoing an all_gather, and
  an all_reduce undoing a replicated_to_unreduced, leave the value; an
  all_reduce of a sharded_to_unreduced over the same axes is an all_gather;
  an all_to_all of an all_to_all used only there, on other dimensions, is
  one all_to_all; an unused all_to_all goes; an all_reduce whose users are
  all the same all_slice becomes a reduce_scatter (and an all_slice of what
  the reduction axes did not cover).

PATTERNS lists them per label, each as (pattern name, op name, function),
in the order MLIR tries them on an op (more matched ops first).
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.collectives import all_to_all_params_attr, axis_lists_attr, create_collective
from sdylog.ir.greedy import Rewriter
from sdylog.ir.rewrite import defining_op, uses
from sdylog.ir.shardings import get_or_create_sharding, get_sharding, is_equivalent, mesh_or_ref
from sdylog.model.axis import add_or_merge, sort_and_merge
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.partition.ir_shardings import all_to_all_params, axis_ref_list, axis_ref_lists

RESHARD_LABEL = "sdy-reshard"
COLLECTIVE_LABEL = "sdy-collective"


def _producer(op, name: str):
    """The op defining op's first operand if it is named `name`."""
    p = defining_op(op.operands[0])
    return p if p is not None and p.name == name else None


def _single_use(value) -> bool:
    return len(uses(value)) == 1


# --- sdy-reshard -------------------------------------------------------------------
def reshard_of_reshard(op, rw: Rewriter) -> bool:
    inner = _producer(op, "sdy.reshard")
    if inner is None or not _single_use(inner.result):
        return False
    new = rw.create("sdy.reshard", op, results=[op.result.type], operands=[inner.operands[0]],
                    attributes={"sharding": op.attributes["sharding"]},
                    loc=ir.Location.fused([op.location, inner.location]))
    rw.replace(op, [new.result])
    return True


# --- sdy-collective: no-ops ------------------------------------------------------------
def _no_op_when_no_axes(attribute: str):
    def pattern(op, rw: Rewriter) -> bool:
        # (every axis prints quoted: `{}`, `[{}, {}]` name none; reading the
        # lists, through MLIR's sharding parser, costs far more)
        if '"' in str(op.attributes[attribute]):
            return False
        rw.replace(op, [op.operands[0]])
        return True
    return pattern


def collective_permute_no_op(op, rw: Rewriter) -> bool:
    if not is_equivalent(get_sharding(op.operands[0]), op.attributes["out_sharding"]):
        return False
    rw.replace(op, [op.operands[0]])
    return True


# --- sdy-collective: pairs that cancel ---------------------------------------------------
def _cancels(producer_name: str, producer_axes: str, axes: str):
    """op(producer(x, A), A) -> x: the op undoes its operand's producer over the same axes."""
    def pattern(op, rw: Rewriter) -> bool:
        producer = _producer(op, producer_name)
        if producer is None or producer.attributes[producer_axes] != op.attributes[axes]:
            return False
        rw.replace(op, [producer.operands[0]])
        return True
    return pattern


def all_reduce_of_sharded_to_unreduced(op, rw: Rewriter) -> bool:
    s2u = _producer(op, "sdy.sharded_to_unreduced")
    if s2u is None:
        return False
    mesh = rw.meshes.of(s2u.attributes["out_sharding"])
    flat = [a for axes in axis_ref_lists(s2u.attributes["axes"]) for a in axes]
    if sort_and_merge(flat, mesh.axis_sizes) != axis_ref_list(op.attributes["reduction_axes"]):
        return False
    gather = create_collective("sdy.all_gather", s2u.operands[0], op.attributes["out_sharding"],
                               s2u.attributes["axes"], loc=op.location, ip=ir.InsertionPoint(op))
    rw.worklist.push(gather)
    rw.replace(op, [gather.result])
    return True


# --- sdy-collective: all_to_all ------------------------------------------------------------
def all_to_all_fusion(op, rw: Rewriter) -> bool:
    inner = _producer(op, "sdy.all_to_all")
    if inner is None or not _single_use(inner.result):
        return False
    inner_params = all_to_all_params(inner.attributes["params"])
    outer_params = all_to_all_params(op.attributes["params"])
    dims = [d for p in inner_params + outer_params for d in (p.src_dim, p.tgt_dim)]
    if len(dims) != len(set(dims)):
        return False
    params = sorted(inner_params + outer_params, key=lambda p: p.src_dim)
    fused = create_collective("sdy.all_to_all", inner.operands[0], op.attributes["out_sharding"],
                              all_to_all_params_attr([(p.axes, p.src_dim, p.tgt_dim) for p in params]),
                              loc=ir.Location.fused([op.location, inner.location]), ip=ir.InsertionPoint(op))
    rw.worklist.push(fused)
    rw.replace(op, [fused.result])
    return True


def all_to_all_unused(op, rw: Rewriter) -> bool:
    if uses(op.result):
        return False
    rw.replace(op, [op.operands[0]])
    return True


# --- sdy-collective: reduce-scatter fusion ---------------------------------------------------
def reduce_scatter_fusion(op, rw: Rewriter) -> bool:
    """all_slice(all_reduce(x, R), S), every user of the all_reduce an all_slice
    with S, this one first: per dimension the longest prefix of S[d] made of
    reduction axes not taken yet becomes a reduce_scatter over them (all of R
    must be taken), the rest of S an all_slice after it."""
    reduce = _producer(op, "sdy.all_reduce")
    if reduce is None:
        return False
    slicing = op.attributes["slicing_axes"]
    block = op.block
    for user, _ in uses(reduce.result):
        if user.name != "sdy.all_slice" or user.attributes["slicing_axes"] != slicing:
            return False
        if user != op and user.block == block and user.is_before_in_block(op):
            return False
    remaining = list(axis_ref_list(reduce.attributes["reduction_axes"]))
    scattered, residual = [], []
    for axes in axis_ref_lists(slicing):
        i = 0
        while i < len(axes) and axes[i] in remaining:
            remaining.remove(axes[i])
            i += 1
        scattered.append(axes[:i])
        residual.append(axes[i:])
    if remaining:
        return False
    mesh = rw.meshes.of(reduce.attributes["out_sharding"])
    reduce_out = reduce.attributes["out_sharding"]
    operand = TensorSharding.from_attr(get_or_create_sharding(reduce.operands[0], mesh_or_ref(reduce_out), True))
    dims = []
    for dim, axes in zip(operand.dims, scattered, strict=True):
        merged = list(dim.axes)
        for a in axes:
            add_or_merge(merged, a, mesh.axis_sizes)
        dims.append(DimSharding(tuple(merged), True))
    slice_out = sdy.TensorShardingAttr(op.attributes["out_sharding"])
    out = sdy.TensorShardingAttr.get(mesh_or_ref(reduce_out), [d.to_attr() for d in dims],
                                     list(slice_out.replicated_axes), list(slice_out.unreduced_axes))
    scatter = create_collective("sdy.reduce_scatter", reduce.operands[0], out, axis_lists_attr(scattered),
                                loc=reduce.location, ip=ir.InsertionPoint(op))
    rw.worklist.push(scatter)
    result = scatter.result
    if any(residual):
        rest = create_collective("sdy.all_slice", result, op.attributes["out_sharding"], axis_lists_attr(residual),
                                 loc=op.location, ip=ir.InsertionPoint(op))
        rw.worklist.push(rest)
        result = rest.result
    for user in [u for u, _ in uses(reduce.result)]:
        rw.replace(user, [result])
    rw.erase(reduce)
    return True


PATTERNS: dict[str, list[tuple[str, str, object]]] = {
    RESHARD_LABEL: [
        ("ReshardOfReshardPattern", "sdy.reshard", reshard_of_reshard),
    ],
    COLLECTIVE_LABEL: [
        ("AllGatherNoopPattern", "sdy.all_gather", _no_op_when_no_axes("gathering_axes")),
        ("AllSliceOfAllGatherPattern", "sdy.all_slice", _cancels("sdy.all_gather", "gathering_axes", "slicing_axes")),
        ("AllSliceNoopPattern", "sdy.all_slice", _no_op_when_no_axes("slicing_axes")),
        ("AllReduceOfReplicatedToUnreducedPattern", "sdy.all_reduce",
         _cancels("sdy.replicated_to_unreduced", "axes", "reduction_axes")),
        ("AllReduceNoopPattern", "sdy.all_reduce", _no_op_when_no_axes("reduction_axes")),
        ("AllReduceOfShardedToUnreducedPattern", "sdy.all_reduce", all_reduce_of_sharded_to_unreduced),
        ("AllToAllFusionPattern", "sdy.all_to_all", all_to_all_fusion),
        ("AllToAllNoUsePattern", "sdy.all_to_all", all_to_all_unused),
        ("CollectivePermuteNoopPattern", "sdy.collective_permute", collective_permute_no_op),
        ("ReduceScatterFusion", "sdy.all_slice", reduce_scatter_fusion),
        ("ReduceScatterNoopPattern", "sdy.reduce_scatter", _no_op_when_no_axes("reduce_scatter_axes")),
    ],
}
