"""-sdy-resolve-single-device-sharding: an op placed on one device
(`#sdy.sharding<@single_dev_k, []>`, a maximal mesh) runs on device k only.

An op without results whose `sdy.sharding` list is on a maximal mesh
(jax.debug.print: JAX places the callback on device 0) is placed so too,
beyond Shardy's pass (which reads results only): XLA runs such a callback
once, on device 0, and so does the per-device program; the full
insert-explicit-reshards gathered its operands onto the device.

Which ops, and on which device, is decided by rules/partition/single_device.dl.
This pass writes that into the IR (mechanical rewriting, so Python): the op
moves into the then-branch of `stablehlo.if (device id == k)`, whose
else-branch yields zeros (tokens for token results); each tensor result is
then summed over every axis of the global mesh (`sdy.all_reduce`: one device
holds the value, the others zeros), which stands for the reshard to
replicated that followed it. Reshards to the single device before the op
are bypassed inside the branch and erased once unused.

Options: replica-count, partition-count (the device id is `replica_id` when
replica-count > 1, else `partition_id`).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import create_op
from sdylog.ir.shardings import Meshes, walk_shardings
from sdylog.model.sharding import TensorSharding
from sdylog.partition.build import Builder, i64, zeros
from sdylog.partition.facts import explicit_facts, run_rules
from sdylog.passes.census import PRESERVED, census


def run(module: ir.Module, options: dict, ctx):
    replicas, partitions = options["replica-count"], options["partition-count"]
    if replicas > 1 and partitions > 1:
        raise error_at(module.operation, "Shardy partitioner does not support replica_count > 1 && "
                       "partition_count > 1 yet.", ctx.filename)
    if not _names_maximal_mesh(module, ctx):
        return PRESERVED
    facts = explicit_facts(module)
    engine = run_rules("single_device", facts, {"resultless_sharding": _resultless_shardings(facts)})
    for op_id, why in engine.select("single_device_conflict", "op", "why", ordered=True):
        raise error_at(facts.ops[op_id], f"'{facts.ops[op_id].name}' op has {why}", ctx.filename)
    placed = engine.select("single_device_op", "op", "device", ordered=True)
    if not placed:
        return PRESERVED
    (mesh_name,) = [m for (m,) in engine.select("global_mesh", "mesh")]
    axes = [a.name for a in facts.meshes[mesh_name].axes]
    bypassed: dict[int, dict[int, ir.Operation]] = {}
    for op_id, index, reshard in engine.select("bypassed_reshard", "op", "index", "reshard", ordered=True):
        bypassed.setdefault(op_id, {})[index] = facts.ops[reshard]
    with module.context, ir.Location.unknown():
        for op_id, device in placed:
            _run_on_one_device(facts.ops[op_id], device, bypassed.get(op_id, {}), mesh_name, axes,
                               replicas > 1, ctx.filename)
    return None


def _resultless_shardings(facts) -> list[tuple]:
    """(op, sharding) rows: op has no results and its `sdy.sharding` list
    holds sharding (a list is its results' shardings: the facts keep no row
    of it)."""
    return [(op_id, facts.sharding_id(s)) for op_id, op in enumerate(facts.ops)
            if not op.results and "sdy.sharding" in op.attributes
            for s in facts.reader.per_value(op.attributes["sdy.sharding"])]


def _names_maximal_mesh(module: ir.Module, ctx) -> bool:
    """Whether some sharding of the module is on a maximal mesh (or on a mesh
    it does not name): the rules place ops on one device only then. A look
    at each distinct sharding, from the census, instead of the facts of
    every op and an evaluation."""
    meshes = Meshes(module)
    found = []

    def look(sharding, _):
        mesh = meshes.of(sharding)
        if mesh is None or mesh.is_maximal:
            found.append(sharding)
    walk_shardings(None, look, by_name=census(module, ctx).by_names())
    return bool(found)


def _run_on_one_device(op, device: int, bypassed: dict, mesh_name: str, axes: list[str],
                       use_replica_id: bool, filename: str) -> None:
    b = Builder(ir.InsertionPoint(op), op.location)
    here = b.device_id(use_replica_id)
    is_target = b.compare(here, b.scalar(device, i64()), "EQ")
    result_types = [r.type for r in op.results]
    if_op = b.op("stablehlo.if", [is_target], result_types, regions=2)

    then = Builder(ir.InsertionPoint(if_op.regions[0].blocks.append()), op.location)
    clone = op.clone(ip=then.ip)
    if "sdy.sharding" in clone.attributes:
        del clone.attributes["sdy.sharding"]
    for i, reshard in bypassed.items():
        clone.operands[i] = reshard.operands[0]
    then.op("stablehlo.return", list(clone.results), [])

    other = Builder(ir.InsertionPoint(if_op.regions[1].blocks.append()), op.location)
    filler = []
    for t in result_types:
        if isinstance(t, ir.RankedTensorType):
            zero = zeros(t)
            if zero is None:
                raise error_at(op, f"cannot make zeros of {t} for the devices that do not run the op", filename)
            filler.append(other.constant(zero))
        else:
            filler.append(other.one("stablehlo.create_token", [], t))
    other.op("stablehlo.return", filler, [])

    after = Builder(ir.InsertionPoint.after(if_op), op.location)
    for old, new in zip(op.results, if_op.results):
        if not isinstance(new.type, ir.RankedTensorType):
            old.replace_all_uses_with(new)
            continue
        replicated = TensorSharding.replicated_on(mesh_name, ir.RankedTensorType(new.type).rank).to_attr()
        reduced = create_op("sdy.all_reduce", [new.type], [new], {
            "reduction_axes": ir.Attribute.parse("#sdy<axis_ref_list{" + ", ".join(f'"{a}"' for a in axes) + "}>"),
            "out_sharding": replicated}, loc=op.location, ip=after.ip).results[0]
        for use in list(old.uses):
            user = use.owner
            if user.name == "sdy.reshard" and user.attributes["sharding"] == replicated:
                user.results[0].replace_all_uses_with(reduced)
                user.erase()
        old.replace_all_uses_with(reduced)
    op.erase()
    for reshard in set(bypassed.values()):
        if not list(reshard.results[0].uses):
            reshard.erase()

