"""-sdy-reshard-to-collectives: every `sdy.reshard` becomes the collectives
(`sdy.all_slice`, `sdy.collective_permute`, `sdy.all_to_all`,
`sdy.all_gather`) that take its operand's sharding to its own
(sdylog/partition/reshard_steps.py says how), as Shardy's pass does.

A reshard stays when either side is on a single-device mesh, when the two
meshes have different axes (and the target is not fully replicated), and
with keep-redundant-reshards when it is a no-op. Which reshards stay is
decided on the module as it comes in (Shardy's conversion asks before it
rewrites anything); each rewrite then reads its operand's sharding as the
rewrites before it left it, past `sdy.propagation_barrier`s.

With a report wanted (not under `sdylog opt`), one evaluation of
rules/collectives.dl gives each collective's bytes per device:
ctx.report["reshard_to_collectives"].
"""
from __future__ import annotations

from dataclasses import replace

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.collectives import (all_to_all_params_attr, axes_text, axis_lists_attr, closed_sharding,
                                   create_collective)
from sdylog.ir.diagnostics import error_at, format_location
from sdylog.ir.rewrite import defining_op, emit_warning, replace_op
from sdylog.ir.shardings import (Meshes, fully_closed_like, get_or_create_sharding, get_sharding, is_equivalent,
                                 mesh_or_ref)
from sdylog.ir.types import element_bytes, shape_of
from sdylog.model.sharding import TensorSharding
from sdylog.partition.collective_costs import Reshard, collective_facts, evaluate, reshard_facts
from sdylog.partition.reshard_steps import ALL_TO_ALL, COLLECTIVE_PERMUTE
from sdylog.passes.census import UNCHANGED, NewOps, census

_NAMES = frozenset({"sdy.reshard", "sdy.all_slice", "sdy.collective_permute", "sdy.all_to_all", "sdy.all_gather"})


def run(module: ir.Module, options: dict, ctx):
    reshards = census(module, ctx).ops("sdy.reshard")
    if not reshards:
        return UNCHANGED
    with module.context:
        meshes = Meshes(module)
        keep = options["keep-redundant-reshards"]
        rewritten = [op for op in reshards if not _stays(op, meshes, keep)]
        done = [_rewrite(op, meshes, ctx.filename) for op in rewritten]
    if getattr(ctx, "derive", "all") != "write-back":
        _report(ctx, [d for d in done if d is not None])
    return NewOps(_NAMES) if rewritten else UNCHANGED


# --- which reshards become collectives ------------------------------------------------
def _bypass_barriers(value):
    while (op := defining_op(value)) is not None and op.name == "sdy.propagation_barrier":
        value = op.operands[0]
    return value


def _is_maximal(meshes: Meshes, sharding) -> bool:
    mesh = meshes.of(sharding)
    return mesh is not None and mesh.is_maximal


def _fully_replicated(sharding) -> bool:
    return sharding is None or TensorSharding.from_attr(sharding).is_fully_replicated


def _equivalent_on_mesh(a, b, meshes: Meshes) -> bool:
    """Same mesh, or meshes with the same axes (device order aside)."""
    if mesh_or_ref(a) == mesh_or_ref(b):
        return True
    ma, mb = meshes.of(a), meshes.of(b)
    return ma is not None and mb is not None and ma.is_maximal == mb.is_maximal and ma.axes == mb.axes


def _stays(op, meshes: Meshes, keep_redundant: bool) -> bool:
    source = get_sharding(_bypass_barriers(op.operands[0]))
    target = op.attributes["sharding"]
    if keep_redundant and is_equivalent(source, target):
        return True
    if source is not None and _is_maximal(meshes, source) or _is_maximal(meshes, target):
        return True
    if _fully_replicated(target):
        return False
    return source is not None and not _equivalent_on_mesh(source, target, meshes)


# --- rewriting one reshard ------------------------------------------------------------
def _rewrite(op, meshes: Meshes, filename: str):
    """Replace the reshard by its collectives; returns, for the report, the
    Reshard, its collectives, its location and (kind, axes) of each op
    made; None when it was just erased."""
    target = op.attributes["sharding"]
    operand = _bypass_barriers(op.operands[0])
    source = get_or_create_sharding(operand, mesh_or_ref(target))
    s_source, s_target = sdy.TensorShardingAttr(source), sdy.TensorShardingAttr(target)
    if (_is_maximal(meshes, source) or _is_maximal(meshes, target)
            or len(s_source.dimension_shardings) != len(s_target.dimension_shardings)):
        raise _not_legalized(op, filename)
    if _fully_replicated(target):
        if _fully_replicated(source):
            replace_op(op, [op.operands[0]])
            return None
        target = fully_closed_like(source)
    if not _equivalent_on_mesh(source, target, meshes):
        raise _not_legalized(op, filename)

    mesh = meshes.of(source)
    source_mesh, target_mesh = mesh_or_ref(source), mesh_or_ref(target)
    shape = shape_of(op.results[0])
    src, tgt = TensorSharding.from_attr(source), TensorSharding.from_attr(target)
    reshard = Reshard(0, str(source_mesh), tuple((a.name, a.size) for a in mesh.axes), shape,
                      element_bytes(op.results[0]), tuple(d.axes for d in src.dims), tuple(d.axes for d in tgt.dims),
                      str(target_mesh) if target_mesh != source_mesh else None)
    collectives = reshard.plan()
    unreduced = list(sdy.TensorShardingAttr(target).unreduced_axes)
    value, created = operand, []
    for col in collectives:
        out = closed_sharding(target_mesh if col.on_target_mesh else source_mesh, col.result, unreduced)
        if col.kind == COLLECTIVE_PERMUTE:
            axes = None
        elif col.kind == ALL_TO_ALL:
            axes = all_to_all_params_attr([(col.axes[0], col.src_dim, col.tgt_dim)])
        else:
            axes = axis_lists_attr(col.axes)
        created.append(create_collective(f"sdy.{col.kind}", value, out, axes, loc=op.location,
                                         ip=ir.InsertionPoint(op)))
        value = created[-1].result
    if collectives and not _reaches(collectives[-1].result, tgt):
        emit_warning(op, "the reshard's collectives stop short of its sharding (Shardy's algorithm "
                     "gives up after two rounds)", filename)
    location = format_location(op.location, filename)
    replace_op(op, [value])
    return reshard, collectives, location, [(c.name[len("sdy."):], axes_text(c)) for c in created]


def _reaches(result, target: TensorSharding) -> bool:
    return tuple(tuple(d) for d in result) == tuple(d.axes for d in target.dims)


def _not_legalized(op, filename: str):
    return error_at(op, "failed to legalize operation 'sdy.reshard' that was explicitly marked illegal", filename)


# --- the report -------------------------------------------------------------------------
def _report(ctx, done) -> None:
    """Bytes per device of each reshard and each of its collectives (one
    evaluation of rules/collectives.dl over all the pass's reshards)."""
    reshards = [replace(r, id=i) for i, (r, _, _, _) in enumerate(done)]
    rows = reshard_facts(reshards)
    rows.update(collective_facts({i: cols for i, (_, cols, _, _) in enumerate(done)},
                                 lambda i: dict(reshards[i].axis_sizes)))
    engine = evaluate(rows, getattr(ctx, "engine", None)) if reshards else None
    step = {(r, s): c for r, s, c in engine.read("reshard_step")} if engine else {}
    bytes_of = dict(engine.read("collective_bytes")) if engine else {}
    reshard_bytes = dict(engine.read("reshard_bytes")) if engine else {}
    entries = [{"location": location, "bytes_per_device": reshard_bytes[i],
                "collectives": [{"kind": kind, "axes": axes, "bytes_per_device": bytes_of[step[i, s]]}
                                for s, (kind, axes) in enumerate(made)]}
               for i, (_, _, location, made) in enumerate(done)]
    ctx.report["reshard_to_collectives"] = {
        "reshards": entries, "bytes_per_device": sum(e["bytes_per_device"] for e in entries)}
