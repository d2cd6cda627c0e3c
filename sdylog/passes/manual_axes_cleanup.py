"""-sdy-manual-axes-cleanup: make the manual axes of every manual computation
explicit and ordered.

Each in/out sharding of a `sdy.manual_computation` that does not use some
manual axis (or part of one) gets the unused part added to its replicated
axes (sorted and merged in mesh order); the manual axes themselves are sorted
in mesh order. A manual computation with manual axes, no operands or results
and a non-empty body is an error.
"""
from __future__ import annotations

from functools import lru_cache

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import as_operation
from sdylog.ir.shardings import Meshes, manual_axes, mesh_or_ref, per_value, per_value_attr
from sdylog.ir.types import is_shaped
from sdylog.model.axis import AXIS_ORDER, AxisRef, sort_and_merge
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding
from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED, census

_NO_OPERANDS_ERROR = ("'sdy.manual_computation' op has manual_axes when there are no in/out "
                      "shardings and the body is not empty. This isn't allowed at this stage, "
                      "please contact the Shardy team or file a bug.")


# --- axis sets (Shardy's AxisRefAttr semantics) ----------------------------------------
def axis_set_diff(a_axes: list[AxisRef], b_axes: list[AxisRef], mesh: Mesh) -> list[AxisRef]:
    """The parts of `a_axes` that no axis of `b_axes` covers (Shardy's getAxisSetDiff)."""
    if not a_axes or a_axes == b_axes:
        return []
    if not b_axes:
        return list(a_axes)
    sizes = mesh.axis_sizes
    ordered_b = sorted(b_axes, key=AXIS_ORDER)
    out = []
    for a in a_axes:
        cur = a
        while cur is not None:
            size = sizes[cur.name]
            hit = next((b for b in ordered_b if cur.overlaps(b, size)), None)
            if hit is None:
                out.append(cur)
                break
            prefix = cur.prefix_without_overlap(hit, size)
            if prefix is not None:
                out.append(prefix)
            cur = cur.suffix_without_overlap(hit, size)
    return out


# --- the pass ---------------------------------------------------------------------------
def common_mesh_ref(shardings, meshes: Meshes):
    """Shardy's getCommonMeshOrRef: the mesh (reference) all non-empty meshes agree on."""
    ref, mesh = None, None
    for s in shardings:
        if s is None:
            continue
        # (the meshes as models: a symbol's is read once, and comparing them
        # compares axes and device ids, as comparing the attributes does)
        other_ref = mesh_or_ref(s)
        other = meshes.of_ref(other_ref)
        if mesh is None or mesh.is_empty:
            mesh, ref = other, other_ref
            continue
        if other.is_empty:
            continue
        if other != mesh:
            return None
    return ref


def _add_unused_manual_axes(shardings, types, manual: list[AxisRef], ref, mesh: Mesh):
    new = [s if not is_shaped(t) else with_unused_manual_axes(s, tuple(manual), ref, mesh)
           for s, t in zip(shardings, types, strict=True)]
    return new if new != shardings else None


@lru_cache(maxsize=4096)
def with_unused_manual_axes(s, manual: tuple[AxisRef, ...], ref, mesh: Mesh):
    """The sharding `s` (on mesh reference `ref`, of mesh `mesh`) with the
    parts of the `manual` axes it does not use added to its replicated
    axes (`s` itself if it uses them all). Kept: attributes are uniqued,
    and modules, and the runs of a process, repeat the same few."""
    ts = TensorSharding.from_attr(s)
    unused = axis_set_diff(list(manual), ts.used_axes(), mesh)
    if not unused:
        return s
    replicated = sort_and_merge(list(ts.replicated) + unused, mesh.axis_sizes)
    old = sdy.TensorShardingAttr(s)   # (its dimensions and unreduced axes as they are: not made again)
    return sdy.TensorShardingAttr.get(ref, list(old.dimension_shardings),
                                      [a.to_attr() for a in replicated], list(old.unreduced_axes))


def run(module: ir.Module, options: dict, ctx):
    ops = census(module, ctx).ops("sdy.manual_computation")
    if not ops:
        return PRESERVED
    changed = False
    with module.context:
        meshes = Meshes(module)
        for op in ops:
            ins = per_value(op.attributes["in_shardings"])
            outs = per_value(op.attributes["out_shardings"])
            axes = manual_axes(op)
            if not ins and not outs:
                body = list(op.regions[0].blocks[0].operations)
                if axes and as_operation(body[0]).name != "sdy.return":
                    raise error_at(op, _NO_OPERANDS_ERROR, ctx.filename)
                continue
            ref = common_mesh_ref(ins + outs, meshes)
            if ref is None:
                raise error_at(op, "expected inputs and outputs to have a common mesh", ctx.filename)
            mesh = meshes.of_ref(ref)
            order = {a.name: i for i, a in enumerate(mesh.axes)}
            sorted_axes = sorted(axes, key=lambda n: order[n])
            if sorted_axes != axes:
                changed = True
                op.attributes["manual_axes"] = sdy.ManualAxesAttr.get(
                    [ir.StringAttr.get(n) for n in sorted_axes])
            manual = [AxisRef(n) for n in sorted_axes]
            new_ins = _add_unused_manual_axes(ins, [v.type for v in op.operands], manual, ref, mesh)
            if new_ins is not None:
                changed = True
                op.attributes["in_shardings"] = per_value_attr(new_ins)
            new_outs = _add_unused_manual_axes(outs, [v.type for v in op.results], manual, ref, mesh)
            if new_outs is not None:
                changed = True
                op.attributes["out_shardings"] = per_value_attr(new_outs)
    # (manual axes and in/out shardings: no op made, erased or moved)
    return ATTRIBUTES_ONLY if changed else PRESERVED
