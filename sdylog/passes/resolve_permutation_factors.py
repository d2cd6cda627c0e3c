"""-sdy-resolve-permutation-factors: no op keeps a sharded permutation factor
(a pad, slice, reverse, window or convolution-window dimension, where a
device's output needs its neighbours' input) that would need data exchange.

rules/partition/permutation.dl decides which factors lose their axes (all
permutation factors but the communication-free slice and pad dimensions)
and so which dimensions of each operand and result are cleared. This pass
writes that as Shardy's insert-explicit-reshards does (partitioning.md 2.4):
a `sdy.reshard` of each changed operand on that use only, the op's result
shardings replaced, and a reshard after the op back to each changed result's
original sharding taking over its other uses. Writing reshards is mechanical
IR rewriting, so Python; it is small and local to this pass until the
reshard writer of -sdy-insert-explicit-reshards exists to share.

Options: enable-halo-exchange, replica-count, partition-count. The halo
exchange (a manual computation trading boundary slices with neighbours
instead of replicating) is not built: with enable-halo-exchange the pass
replicates as without it, and says so on stderr once.
"""
from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import replace

from jaxlib.mlir import ir

from sdylog.ir.rewrite import create_op
from sdylog.model.sharding import DimSharding, TensorSharding, sharding_per_value_attr
from sdylog.partition import ir_shardings as irs
from sdylog.partition.facts import add_sharding_rules, add_slice_and_pad_attributes, explicit_facts, run_rules
from sdylog.passes.census import UNCHANGED


def run(module: ir.Module, options: dict, ctx):
    facts = explicit_facts(module)
    with module.context:
        add_slice_and_pad_attributes(facts)
        add_sharding_rules(facts, lambda op: op.name.startswith("stablehlo.") and op.name != "stablehlo.return")
    answers = run_rules("permutation", facts, engine=getattr(ctx, "engine", None))
    cleared = defaultdict(set)                  # op id -> {(tensor, dim)}
    for op_id, t, d in answers.read("cleared_dim"):
        cleared[op_id].add((t, d))
    meshes = dict(answers.read("op_mesh"))
    if options["enable-halo-exchange"] and cleared:
        print("sdylog: -sdy-resolve-permutation-factors: the halo exchange is not built; "
              "permutation factors are replicated instead", file=sys.stderr)
    changed = False
    with module.context, ir.Location.unknown():
        for op_id in sorted(cleared):
            changed |= _reshard_around(facts.ops[op_id], cleared[op_id], meshes[op_id])
    return None if changed else UNCHANGED


def _reshard_around(op, cleared: set, mesh: str) -> bool:
    """Operands resharded without their cleared dimensions' axes, the op
    working on that, and its results resharded back."""
    n = len(op.operands)
    changed = False
    for i, v in enumerate(op.operands):
        old = _sharding_or_replicated(irs.sharding_of(v), v, mesh)
        if old is None:
            continue
        new = _without_dims(old, {d for t, d in cleared if t == i})
        if new != old:
            op.operands[i] = _reshard(v, new, ir.InsertionPoint(op), op.location)
            changed = True
    results = []
    for j, r in enumerate(op.results):
        old = _sharding_or_replicated(irs.op_result_sharding(op, j), r, mesh)
        new = None if old is None else _without_dims(old, {d for t, d in cleared if t == n + j})
        results.append((r, old, new))
    if not any(old != new for _, old, new in results):
        return changed
    op.attributes["sdy.sharding"] = sharding_per_value_attr([new if new is not None else
                                                            TensorSharding(mesh, ()) for _, _, new in results])
    after = ir.InsertionPoint.after(op)
    for r, old, new in results:
        if old != new:
            back = _reshard(r, old, after, op.location)
            r.replace_all_uses_except(back, back.owner.operation)
    return True


def _sharding_or_replicated(sharding, value, mesh: str) -> TensorSharding | None:
    """A tensor's sharding, closed and replicated on the op's mesh when it has none."""
    if not isinstance(value.type, ir.RankedTensorType):
        return None
    if sharding is None:
        return TensorSharding.replicated_on(mesh, ir.RankedTensorType(value.type).rank)
    return sharding


def _without_dims(sharding: TensorSharding, dims: set) -> TensorSharding:
    return replace(sharding, dims=tuple(DimSharding((), d.is_closed, d.priority) if i in dims else d
                                        for i, d in enumerate(sharding.dims)))


def _reshard(value, sharding: TensorSharding, ip, loc):
    return create_op("sdy.reshard", [value.type], [value], {"sharding": sharding.to_attr()},
                     loc=loc, ip=ip).results[0]
