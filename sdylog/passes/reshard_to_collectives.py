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

from dataclasses import dataclass, replace

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
from sdylog.passes.census import PRESERVED, Invalidated, census

_NAMES = frozenset({"sdy.reshard", "sdy.all_slice", "sdy.collective_permute", "sdy.all_to_all", "sdy.all_gather"})


def run(module: ir.Module, options: dict, ctx):
    found = census(module, ctx)
    reshards = found.ops("sdy.reshard")
    if not reshards:
        return PRESERVED
    report = getattr(ctx, "derive", "all") != "write-back"
    with module.context:
        rewriter = _Rewriter(Meshes(module), ctx.filename)
        keep = options["keep-redundant-reshards"]
        rewritten = [op for op in reshards if not rewriter.stays(op, keep)]
        done = [rewriter.rewrite(op, report) for op in rewritten]
    if report:
        _report(ctx, [d for d in done if d is not None])
    if not rewritten:
        return PRESERVED
    # (collectives made before the reshards, which it erased: the census' lists with them)
    return Invalidated(_NAMES, relisted=found.relisted_edited(rewriter.placed_before, rewriter.erased))


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


def _stays(source, target, meshes: Meshes, keep_redundant: bool) -> bool:
    """Whether a reshard from `source` (None: no sharding) to `target` is left
    as it is (legal, for Shardy's conversion)."""
    if keep_redundant and is_equivalent(source, target):
        return True
    if source is not None and _is_maximal(meshes, source) or _is_maximal(meshes, target):
        return True
    if _fully_replicated(target):
        return False
    return source is not None and not _equivalent_on_mesh(source, target, meshes)


# --- rewriting one reshard ------------------------------------------------------------
@dataclass(frozen=True)
class _Recipe:
    """What a reshard from one sharding to another of one tensor type becomes."""
    reshard: Reshard
    collectives: list                # reshard_steps.Collective
    ops: list                        # (op name, out_sharding, axes attribute or None) per collective
    complete: bool                   # the last collective reaches the target


_ERASE = "erase"            # both sides fully replicated: the reshard's operand stands for it
_FAIL = "fail"              # Shardy's conversion fails on it


class _Rewriter:
    """Rewrites reshards, deciding and planning each distinct (source, target,
    type) once (models repeat the same reshards layer after layer)."""

    def __init__(self, meshes: Meshes, filename: str):
        self.meshes = meshes
        self.filename = filename
        self.legal: dict = {}
        self.recipes: dict = {}
        # the ops made before each reshard rewritten, and the reshards erased (by id)
        self.placed_before: dict[int, list] = {}
        self.erased: set[int] = set()

    def stays(self, op, keep_redundant: bool) -> bool:
        key = (get_sharding(_bypass_barriers(op.operands[0])), op.attributes["sharding"])
        legal = self.legal.get(key)
        if legal is None:
            legal = self.legal[key] = _stays(*key, self.meshes, keep_redundant)
        return legal

    def rewrite(self, op, report: bool):
        """Replace the reshard by its collectives; returns, with `report`, the
        recipe, the reshard's location and (kind, axes) of each op made
        (None when it was just erased)."""
        target = op.attributes["sharding"]
        operand = _bypass_barriers(op.operands[0])
        source = get_or_create_sharding(operand, mesh_or_ref(target))
        key = (source, target, op.result.type)
        recipe = self.recipes.get(key)
        if recipe is None:
            recipe = self.recipes[key] = plan_reshard_recipe(source, target, op.result.type, self.meshes)
        if recipe is _FAIL:
            raise error_at(op, "failed to legalize operation 'sdy.reshard' that was explicitly marked illegal",
                           self.filename)
        self.erased.add(id(op))
        if recipe is _ERASE:
            replace_op(op, [op.operands[0]])
            return None
        value, created = operand, []
        for name, out, axes in recipe.ops:
            created.append(create_collective(name, value, out, axes, loc=op.location, ip=ir.InsertionPoint(op)))
            value = created[-1].result
        self.placed_before[id(op)] = created
        if not recipe.complete:
            emit_warning(op, "the reshard's collectives stop short of its sharding (Shardy's algorithm "
                         "gives up after two rounds)", self.filename)
        location = format_location(op, self.filename) if report else None
        replace_op(op, [value])
        if not report:
            return None
        return recipe, location, [(c.name[len("sdy."):], axes_text(c)) for c in created]

def plan_reshard_recipe(source, target, result_type, meshes: Meshes):
    """What a reshard of a `result_type` tensor from sharding `source` to
    `target` becomes: a _Recipe, _ERASE (nothing to do) or _FAIL (Shardy's
    conversion fails on it)."""
    if (_is_maximal(meshes, source) or _is_maximal(meshes, target)
            or len(sdy.TensorShardingAttr(source).dimension_shardings)
            != len(sdy.TensorShardingAttr(target).dimension_shardings)):
        return _FAIL
    if _fully_replicated(target):
        if _fully_replicated(source):
            return _ERASE
        target = fully_closed_like(source)
    if not _equivalent_on_mesh(source, target, meshes):
        return _FAIL
    mesh = meshes.of(source)
    source_mesh, target_mesh = mesh_or_ref(source), mesh_or_ref(target)
    src, tgt = TensorSharding.from_attr(source), TensorSharding.from_attr(target)
    reshard = Reshard(0, str(source_mesh), tuple((a.name, a.size) for a in mesh.axes), shape_of(result_type),
                      element_bytes(result_type), tuple(d.axes for d in src.dims),
                      tuple(d.axes for d in tgt.dims), str(target_mesh) if target_mesh != source_mesh else None)
    collectives = reshard.plan()
    unreduced = list(sdy.TensorShardingAttr(target).unreduced_axes)
    ops = []
    for col in collectives:
        out = closed_sharding(target_mesh if col.on_target_mesh else source_mesh, col.result, unreduced)
        if col.kind == COLLECTIVE_PERMUTE:
            axes = None
        elif col.kind == ALL_TO_ALL:
            axes = all_to_all_params_attr([(col.axes[0], col.src_dim, col.tgt_dim)])
        else:
            axes = axis_lists_attr(col.axes)
        ops.append((f"sdy.{col.kind}", out, axes))
    complete = not collectives or _reaches(collectives[-1].result, tgt)
    return _Recipe(reshard, collectives, ops, complete)


def _reaches(result, target: TensorSharding) -> bool:
    return tuple(tuple(d) for d in result) == tuple(d.axes for d in target.dims)


# --- the report -------------------------------------------------------------------------
def recipe_costs(recipes: list) -> list[tuple[int, list[int]]]:
    """Bytes per device of each recipe's reshard and of each of its
    collectives, in order (one evaluation of rules/collectives.dl over all)."""
    if not recipes:
        return []
    reshards = [replace(recipe.reshard, id=i) for i, recipe in enumerate(recipes)]
    rows = reshard_facts(reshards)
    rows.update(collective_facts({i: recipe.collectives for i, recipe in enumerate(recipes)},
                                 lambda i: dict(reshards[i].axis_sizes)))
    rules = evaluate(rows)
    step = {(r, s): c for r, s, c in rules.select("reshard_step", "r", "step", "c")}
    bytes_of = dict(rules.select("collective_bytes", "c", "bytes"))
    reshard_bytes = dict(rules.select("reshard_bytes", "r", "bytes"))
    return [(reshard_bytes[i], [bytes_of[step[i, s]] for s in range(len(recipe.collectives))])
            for i, recipe in enumerate(recipes)]


def _report(ctx, done) -> None:
    """Bytes per device of each reshard and each of its collectives."""
    costs = recipe_costs([recipe for recipe, _, _ in done])
    entries = [{"location": location, "bytes_per_device": total,
                "collectives": [{"kind": kind, "axes": axes, "bytes_per_device": b}
                                for (kind, axes), b in zip(made, steps)]}
               for (_, location, made), (total, steps) in zip(done, costs)]
    ctx.report["reshard_to_collectives"] = {
        "reshards": entries, "bytes_per_device": sum(e["bytes_per_device"] for e in entries)}
