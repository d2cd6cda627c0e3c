"""-sdy-import-func-calls: inline every call as a `sdy.named_computation`.

Calls are visited callee-first (call-graph post order). Each becomes a named
computation named after the callee's original name, with the callee's
argument shardings as in-shardings (if any is on a non-maximal mesh), the
call's result shardings as out-shardings, the call's other discardable
attributes and the callee's `execution_thread`. The first call to a function
takes its body; later calls clone the body of that first named computation
(with a warning). Inlined functions are erased. Optionally, data-flow edges
are then added on every named computation.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.rewrite import (create_op, discardable_attributes, emit_warning, move_region_blocks,
                               post_order_ops, replace_op, replace_terminator)
from sdylog.ir.shardings import EXECUTION_THREAD, SHARDING, Meshes, func_arg_shardings_or_open, per_value_attr
from sdylog.ir.symbols import (SymbolTable, callee_name, calls_in_call_graph_post_order,
                               lookup_func, original_func_name)
from sdylog.passes.add_data_flow_edges import add_data_flow_edges
from sdylog.passes.census import PRESERVED, census


class _Importer:
    def __init__(self, module, ctx):
        self.module = module
        self.ctx = ctx
        self.symbols = SymbolTable(module)
        self.meshes = Meshes(module)
        self.moved: dict[str, ir.Operation] = {}   # callee name -> named computation holding its body
        self.warned = False

    def import_call(self, call) -> None:
        name = callee_name(call)
        func = lookup_func(self.symbols, name, call, self.ctx.filename)
        attrs = {"name": ir.StringAttr.get(original_func_name(func))}
        in_shardings = func_arg_shardings_or_open(func, self.meshes)
        if in_shardings is not None:
            attrs["in_shardings"] = per_value_attr(in_shardings)
        if SHARDING in call.attributes:
            attrs["out_shardings"] = call.attributes[SHARDING]
        for key, value in discardable_attributes(call).items():
            if key != SHARDING:
                attrs[key] = value
        if EXECUTION_THREAD in func.attributes:
            attrs[EXECUTION_THREAD] = func.attributes[EXECUTION_THREAD]
        nc = create_op("sdy.named_computation", results=[r.type for r in call.results],
                       operands=list(call.operands), attributes=attrs, regions=1,
                       loc=call.location, ip=ir.InsertionPoint(call))
        first = self.moved.get(name)
        if first is not None:
            if not self.warned:  # Shardy warns once per process
                self.warned = True
                emit_warning(call, f"function @{name} has multiple call ops, we need to clone the "
                             "function body for each call", self.ctx.filename)
            copy = first.clone(ip=ir.InsertionPoint(call))
            move_region_blocks(copy.regions[0], nc.regions[0])
            copy.erase()
        else:
            move_region_blocks(func.regions[0], nc.regions[0])
            for block in nc.regions[0].blocks:
                replace_terminator(block, "sdy.return")
            self.moved[name] = nc
        replace_op(call, nc.results)


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    add_edges = options["add-data-flow-edges-on-named-computations"]
    if not found.has("func.call") and not (add_edges and found.has("sdy.named_computation")):
        return PRESERVED
    calls = calls_in_call_graph_post_order(module, found.calls_in, filename=ctx.filename)
    with module.context:
        importer = _Importer(module, ctx)
        for call in calls:
            importer.import_call(call)
        for name in importer.moved:
            importer.symbols.erase(importer.symbols.lookup(name))
        if add_edges:
            for nc in [op for op in post_order_ops(module.operation) if op.name == "sdy.named_computation"]:
                add_data_flow_edges(nc)

