"""-sdy-insert-func-call-reshards: reconcile call result shardings with the
callee's result shardings.

The call takes the callee's result shardings (fully open where missing, if
any result sharding is on a non-maximal mesh; else fully closed copies of
the call's own, if it has any). Where the call's previous sharding of a
result was not equivalent, a `sdy.reshard` right after the call turns the
result back into it (fully closed if it had none) for the result's users.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.collectives import create_reshard
from sdylog.ir.rewrite import ip_after_value
from sdylog.ir.shardings import (Meshes, fully_closed_like, func_result_shardings_or_open, is_equivalent,
                                 op_shardings, set_op_shardings)
from sdylog.passes.census import Invalidated, rewrite_each_call


def insert_reshards_on_results(func, call, meshes: Meshes) -> bool:
    """Whether it changed the call (its shardings) or added a reshard."""
    func_shardings = func_result_shardings_or_open(func, meshes)
    call_shardings = op_shardings(call)
    if func_shardings is None:
        if not call_shardings:
            return False
        func_shardings = [fully_closed_like(s) for s in call_shardings]
    changed = func_shardings != call_shardings
    # (a call result's sharding, get_sharding's, is its entry of the call's list)
    for i, (func_sharding, result) in enumerate(zip(func_shardings, list(call.results), strict=True)):
        call_sharding = call_shardings[i] if call_shardings else None
        if is_equivalent(func_sharding, call_sharding):
            continue
        target = call_sharding if call_sharding is not None else fully_closed_like(func_sharding)
        reshard = create_reshard(result, target, loc=result.location, ip=ip_after_value(result))
        result.replace_all_uses_except(reshard.results[0], reshard)
        changed = True
    set_op_shardings(call, func_shardings)
    return changed


def run(module: ir.Module, options: dict, ctx):
    # (what it does: reshards added, calls' shardings set)
    return rewrite_each_call(module, ctx, lambda call, callee, meshes: insert_reshards_on_results(callee(), call, meshes),
                             change=Invalidated(frozenset({"sdy.reshard"})))
