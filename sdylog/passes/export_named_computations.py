"""-sdy-export-named-computations: every `sdy.named_computation` becomes a call to
a new private function holding its body.

Named computations are handled innermost first. Shardings on the data-flow
edges of the body arguments and results (if any) become the named
computation's in/out shardings first; the new function (named after the
computation, renamed `<name>_<N>` on a clash, marked
`sdy.original_func_name`) takes the in-shardings as argument shardings, the
call takes the out-shardings and the other discardable attributes (the
function takes `execution_thread`). The edges are removed.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import (create_op, discardable_attributes, move_region_blocks,
                               post_order_ops, replace_op, replace_terminator)
from sdylog.ir.shardings import EXECUTION_THREAD, SHARDING, data_flow_edge_of_owner, per_value, per_value_attr
from sdylog.ir.symbols import ORIGINAL_FUNC_NAME, SymbolTable
from sdylog.passes.census import PRESERVED, census
from sdylog.passes.sink_data_flow_edges import shardings_from_edges


def remove_data_flow_edges(edges) -> None:
    """Replace each edge (None: no edge) by its input."""
    for edge in edges:
        if edge is not None:
            replace_op(edge, [edge.operands[0]])


def _optional(op, name):
    return op.attributes[name] if name in op.attributes else None


def export(nc, module: ir.Module, symbols: SymbolTable) -> list:
    """Replace one named computation by a call; returns the edges on the
    call's results (None where a result has none), for the caller to remove."""
    body = nc.regions[0].blocks[0]
    args, results = list(body.arguments), list(nc.results)
    # (each looked up once: the ops stay valid as their blocks move)
    arg_edges = [data_flow_edge_of_owner(a) for a in args]
    result_edges = [data_flow_edge_of_owner(r) for r in results]
    # (the edges' shardings, else the computation's own: the function's
    # argument shardings and the call's result shardings)
    in_shardings = shardings_from_edges(args, arg_edges)
    if not in_shardings and "in_shardings" in nc.attributes:
        in_shardings = per_value(nc.attributes["in_shardings"])
    result_shardings = shardings_from_edges(results, result_edges)
    out_shardings = per_value_attr(result_shardings) if result_shardings else _optional(nc, "out_shardings")

    name = ir.StringAttr(nc.attributes["name"]).value
    ftype = ir.FunctionType.get([a.type for a in args], [r.type for r in results])
    func_attrs = {"sym_name": ir.StringAttr.get(name), "function_type": ir.TypeAttr.get(ftype),
                  "sym_visibility": ir.StringAttr.get("private"), ORIGINAL_FUNC_NAME: ir.StringAttr.get(name)}
    if in_shardings:   # (a new function has no other argument attribute)
        func_attrs["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get({SHARDING: s}) for s in in_shardings])
    func = create_op("func.func", attributes=func_attrs, regions=1, loc=nc.location,
                     ip=ir.InsertionPoint(module.body))
    move_region_blocks(nc.regions[0], func.regions[0])
    for block in func.regions[0].blocks:
        replace_terminator(block, "func.return")
    remove_data_flow_edges(arg_edges)
    if EXECUTION_THREAD in nc.attributes:
        func.attributes[EXECUTION_THREAD] = nc.attributes[EXECUTION_THREAD]
    func_name = symbols.insert(func)

    attrs = {"callee": ir.FlatSymbolRefAttr.get(func_name)}
    for key, value in discardable_attributes(nc).items():
        if key != EXECUTION_THREAD:
            attrs[key] = value
    if out_shardings is not None:
        attrs[SHARDING] = out_shardings
    call = create_op("func.call", results=[r.type for r in results], operands=list(nc.operands),
                     attributes=attrs, loc=nc.location, ip=ir.InsertionPoint(nc))
    replace_op(nc, call.results)
    return result_edges


def run(module: ir.Module, options: dict, ctx):
    if not census(module, ctx).has("sdy.named_computation"):
        return PRESERVED
    with module.context:
        symbols = SymbolTable(module)
        result_edges = []
        for nc in [op for op in post_order_ops(module.operation) if op.name == "sdy.named_computation"]:
            result_edges += export(nc, module, symbols)
        remove_data_flow_edges(result_edges)
