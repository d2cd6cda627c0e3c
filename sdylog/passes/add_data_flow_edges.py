"""-sdy-add-data-flow-edges: a `sdy.data_flow_edge` on every data-flow edge owner.

The owners are the results of while / case / optimization-barrier / named
and manual computation ops, and the body arguments of named and manual
computations. Each statically shaped owner gets an edge op right after it
that takes over all its uses and starts with the owner's current sharding.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op, ip_after_value
from sdylog.ir.shardings import DATA_FLOW_OPS, block_arg_owners, get_sharding, result_owners
from sdylog.ir.types import is_static_shaped
from sdylog.passes.census import PRESERVED, Invalidated, census


def add_data_flow_edges(owners) -> None:
    """Shardy's addDataFlowEdges: last owner first, so that the edges of one op
    end up in owner order."""
    for owner in reversed(list(owners)):
        if not is_static_shaped(owner.type):
            continue
        sharding = get_sharding(owner)
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
            add_data_flow_edges(block_arg_owners(op))
            add_data_flow_edges(result_owners(op))
    return Invalidated(frozenset({"sdy.data_flow_edge"}))   # (the edges made; uses rewired)
