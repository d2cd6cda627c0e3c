"""-sdy-sink-data-flow-edges: move the shardings of `sdy.data_flow_edge` ops back
onto their data-flow ops and remove the edges.

For each data-flow op, if some edge on its block-argument owners (or on its
results) has a sharding, the op's owner shardings become the edges'
shardings, with fully open shardings on that mesh for owners whose edge has
none. Every edge is then replaced by its input.

The pass changes shardings and erases edges only, each told to the facts
kept in the pipeline's scope (sdylog/facts/shared.py), which follow it: the
reshard step after it reads them instead of extracting them again.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.facts.shared import erasing
from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.rewrite import replace_op
from sdylog.ir.shardings import (block_arg_owners, data_flow_edge_of_owner, fully_replicated,
                                 is_data_flow_op, mesh_or_ref, result_owners,
                                 set_block_arg_owner_shardings, set_result_owner_shardings)
from sdylog.ir.types import rank_of
from sdylog.passes.census import PRESERVED, Invalidated, census

EDGE = "sdy.data_flow_edge"


def shardings_from_edges(owners, edges=None) -> list:
    """The shardings of the owners' edges; [] if none has one, else fully open
    shardings (on the first edge sharding's mesh) where an edge has none.
    `edges`: the owners' edges (data_flow_edge_of_owner), list for list, if
    the caller has them."""
    if edges is None:
        edges = [data_flow_edge_of_owner(owner) for owner in owners]
    shardings, ref = [], None
    for edge in edges:
        s = edge.attributes["sharding"] if edge is not None and "sharding" in edge.attributes else None
        if s is not None and ref is None:
            ref = mesh_or_ref(s)
        shardings.append(s)
    if ref is None:
        return []
    return [s if s is not None else fully_replicated(ref, rank_of(o), closed=False)
            for s, o in zip(shardings, owners)]


def sink_edges(ctx, ops: list) -> set[int]:
    """Sink the edges of the data-flow ops among `ops` (a function and the
    ops nested in it, pre-order: a census'); the facts kept in ctx's scope,
    if any, are told of each edge erased. Returns the ids of the ops (of
    `ops`) it erased."""
    erased = set()
    for op in ops:
        if op.name == EDGE:
            erasing(ctx, op, op.operands[0])
            replace_op(op, [op.operands[0]])
            erased.add(id(op))
            continue
        if not is_data_flow_op(op):
            continue
        arg_shardings = shardings_from_edges(block_arg_owners(op))
        if arg_shardings:
            set_block_arg_owner_shardings(op, arg_shardings)
        result_shardings = shardings_from_edges(result_owners(op))
        if result_shardings:
            set_result_owner_shardings(op, result_shardings)
    return erased


def run(module: ir.Module, options: dict, ctx):
    for flag in ("sink-debug-sharding-origins", "sink-debug-propagation-edge-sharding"):
        if options.get(flag):
            raise SdylogError(f"-sdy-sink-data-flow-edges: '{flag}' is not supported")
    found = census(module, ctx)
    if not found.has(EDGE):
        return PRESERVED  # no edge to remove, none to take a sharding from
    erased: set[int] = set()
    with module.context:
        for func in [op for op in module.body.operations if op.operation.name == "func.func"]:
            erased |= sink_edges(ctx, found.within(func))
    # (edges erased, shardings set: the census' lists without the edges)
    return Invalidated(frozenset({EDGE}), shardings_only=True, relisted=found.relisted_without(erased))
