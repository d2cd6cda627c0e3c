"""-sdy-add-data-flow-edges: a `sdy.data_flow_edge` on every data-flow edge owner.

The owners are the results of while / case / optimization-barrier / named
and manual computation ops, and the body arguments of named and manual
computations. Each statically shaped owner gets an edge op right after it
that takes over all its uses and starts with the owner's current sharding.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op, ip_after_value
from sdylog.ir.shardings import (DATA_FLOW_OPS, block_arg_owner_shardings, block_arg_owners,
                                 data_flow_edge_of_owner, result_owner_shardings, result_owners)
from sdylog.ir.types import is_static_shaped
from sdylog.passes.census import PRESERVED, Invalidated, census


def add_data_flow_edges(op) -> None:
    """Shardy's addDataFlowEdges on the owners of one data-flow op, its block
    arguments then its results: last owner first, so that the edges of one op
    end up in owner order. An edge starts with its owner's sharding
    (get_sharding's, read from the op's lists once: making edges changes no
    attribute of the op; an owner with an edge already has that edge's)."""
    for owners, shardings in ((block_arg_owners(op), block_arg_owner_shardings(op)),
                              (result_owners(op), result_owner_shardings(op))):
        shardings = shardings or [None] * len(owners)
        for owner, sharding in reversed(list(zip(owners, shardings, strict=True))):
            if not is_static_shaped(owner.type):
                continue
            edge = data_flow_edge_of_owner(owner)
            if edge is not None:
                sharding = edge.attributes["sharding"] if "sharding" in edge.attributes else None
            attrs = {"sharding": sharding} if sharding is not None else {}
            edge = create_op("sdy.data_flow_edge", results=[owner.type], operands=[owner],
                             attributes=attrs, loc=owner.location, ip=ip_after_value(owner))
            owner.replace_all_uses_except(edge.results[0], edge)


def run(module: ir.Module, options: dict, ctx):
    ops = census(module, ctx).ops_of(sorted(DATA_FLOW_OPS))
    if not ops:
        return PRESERVED
    with module.context:
        for op in ops:
            add_data_flow_edges(op)
    return Invalidated(frozenset({"sdy.data_flow_edge"}))   # (the edges made; uses rewired)
