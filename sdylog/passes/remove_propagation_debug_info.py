"""-sdy-remove-propagation-debug-info: remove the debug attributes propagation may
leave (sharding origins and propagation edges) from ops and function
arguments / results."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import (func_type, set_func_arg_attr, set_func_result_attr,
                                 func_arg_attr, func_result_attr)
from sdylog.ir.walk import walk_ops

DEBUG_ATTRIBUTES = (
    "sdy.propagation_edges", "sdy.block_arg_propagation_edges", "sdy.result_propagation_edges",
    "sdy.sharding_origins", "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins",
)


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context:
        for op in walk_ops(module.operation):
            if op.name == "func.func":
                ft = func_type(op)
                for name in DEBUG_ATTRIBUTES:
                    for i in range(len(ft.inputs)):
                        if func_arg_attr(op, i, name) is not None:
                            set_func_arg_attr(op, i, name, None)
                    for i in range(len(ft.results)):
                        if func_result_attr(op, i, name) is not None:
                            set_func_result_attr(op, i, name, None)
                continue
            for name in DEBUG_ATTRIBUTES:
                if name in op.attributes:
                    del op.attributes[name]
