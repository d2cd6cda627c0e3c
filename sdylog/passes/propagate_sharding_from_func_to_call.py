"""-sdy-propagate-sharding-from-func-to-call: a call without result shardings
takes its callee's result shardings.

The callee's shardings count only if one of them is on a non-maximal mesh;
results without a sharding then get a fully open one. A call that already
has `sdy.sharding` keeps it, even if every entry in it is empty.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.shardings import SHARDING, Meshes, func_result_shardings_or_open, set_op_shardings
from sdylog.passes.census import SHARDINGS_ONLY, rewrite_each_call


def take_callee_result_shardings(call, callee, meshes: Meshes) -> bool:
    """Whether the call took its callee's result shardings."""
    if SHARDING in call.attributes:
        return False
    shardings = func_result_shardings_or_open(callee(), meshes)
    if shardings is None:
        return False
    set_op_shardings(call, shardings)
    return True


def run(module: ir.Module, options: dict, ctx):
    return rewrite_each_call(module, ctx, take_callee_result_shardings, change=SHARDINGS_ONLY)
