"""-sdy-resolve-permutation-factors: no op keeps a sharded permutation factor
(a pad, slice, reverse, window or convolution-window dimension, where a
device's output needs its neighbours' input) that would need data exchange.

rules/partition/permutation.dl decides which factors lose their axes (all
permutation factors but the communication-free slice and pad dimensions)
and so which dimensions of each operand and result are cleared. This pass
writes that as Shardy's insert-explicit-reshards does (partitioning.md 2.4):
a `sdy.reshard` of each changed operand on that use only, the op's result
shardings replaced, and a reshard after the op back to each changed result's
original sharding taking over its other uses: with the reshard writer's
reshard_operand / reshard_result_back (sdylog/reshard/writer.py).

With enable-halo-exchange, the rules pick the pads and slices whose
sharded dimensions need at most their neighbours' data (halo_op; not a
slice strided along a sharded dimension, whose factors are cleared) and
give each dimension's numbers (halo_dim: shard sizes, how many hops left
and right, whether each device cuts its window); the pass builds Shardy's
exchange for them (sdylog/partition/halo.py):
inside a `sdy.manual_computation` over the dimensions' axes, each device
concatenates its neighbours' blocks (`collective_permute`) around its own,
pads the buffer, and cuts its output window at an offset computed from its
device id. A reshape whose uneven groups each split one dimension within
one hop of its neighbours (reshape_halo_dim, reshape_halo_offset) gets the
same exchange, its window reshaped locally; other reshapes and windows are
replicated even then, reverses get a reversed device order.

Not Shardy's, each decided in the same rules:
- a dynamic_update_slice whose operand is sharded on a dimension the
  update's window cuts (dus_local; its update replicated there first,
  dus_update_cleared) has each device write the part of the update in its
  own block (sdylog/partition/local_update.py);
- a convolution whose kernel is sharded on a spatial dimension (the
  reduction factor a weight gradient's window has; conv_sum, with its
  halo or gathered input and the dimensions cleared first,
  conv_sum_cleared) becomes each device's partial sum over its block of
  the window, and, with halos, one whose input and result are sharded
  alike on a spatial dimension (conv_block_dim: a forward convolution or
  an input gradient) each device's block of the result from its block of
  the input and the rows of its neighbours it reads
  (sdylog/partition/conv_window_sum.py);
- a reshape group whose two sides do not carry the same axes
  (misaligned_reshape_group) is replicated around the reshape;
- a top-k's sorted dimension (sorted_dim: chlo.top_k's and mhlo.topk's
  last, ApproxTopK's reduction_dim) and an operand factor its results lack
  (operand_only_factor) are gathered around it, so that each device sorts
  whole rows;
- a convolution's result window dimension with no factor of its own (a
  window longer than the windows it makes) and every window dimension of
  a convolution that makes no window are cleared, unless cut in blocks;
with or without halos.

Options: enable-halo-exchange, replica-count, partition-count.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.op_properties import reduction_dim
from sdylog.ir.shardings import SHARDING_RULE
from sdylog.ir.types import shape_of
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import meshes_of_module
from sdylog.model.sharding import DimSharding, TensorSharding, sharding_per_value_attr
from sdylog.oprules.registry import may_have_permutation_factors
from sdylog.partition import ir_shardings as irs
from sdylog.partition.conv_window_sum import SumDim, sum_window
from sdylog.partition.facts import (add_conv_windows, add_sharding_rules, add_slice_and_pad_attributes, explicit_facts,
                                    run_rules)
from sdylog.partition.halo import HaloDim, HaloExchange, ReshapeHaloGroup
from sdylog.partition.local_update import local_update
from sdylog.partition.shards import atomic_axes, axes_size, divides_on, expand_to_atomic
from sdylog.passes.census import PRESERVED, census
from sdylog.reshard.writer import reshard_operand, reshard_result_back


def run(module: ir.Module, options: dict, ctx):
    ops = _ops_the_rules_ask_about(module, ctx)
    if not ops:
        return PRESERVED
    return resolve(module, options, ctx, ops)


def _ops_the_rules_ask_about(module: ir.Module, ctx) -> list:
    """The ops rules/partition/permutation.dl can clear a dimension of, in
    walk order: stablehlo ops whose rule may have a permutation factor (by
    their name, or a rule attached to them), and reshapes whose operand or
    result sharding does not divide it (the rules replicate around a reshape
    for such a dimension only). Its rules look at nothing but an op's own
    operands and results, so the facts of these ops answer for the whole
    module: most models have few of them. Custom calls and chlo.top_k too:
    the dimension a top-k sorts is gathered (operand_only_factor, sorted_dim)."""
    ops, names = census(module, ctx).all_ops_and_names()
    asked = {n for n in set(names) if may_have_permutation_factors(n)}
    reader, meshes = irs.CachedShardingReader(), meshes_of_module(module)
    return [op for op, n in zip(ops, names)
            if n in asked or n in ("stablehlo.dynamic_update_slice", "stablehlo.custom_call", "chlo.top_k")
            or (n == "stablehlo.reshape" and (not _divisible_reshape(op, reader, meshes)
                                              or _misaligned_reshape(op, reader, meshes)))
            or (n.startswith("stablehlo.") and SHARDING_RULE in op.attributes)]


def _divisible_reshape(op, reader, meshes) -> bool:
    """The reshape's operand and result shardings (if any) divide them."""
    for value in (op.operands[0], op.results[0]):
        try:
            sharding = reader.sharding_of(value)
        except SdylogError:
            return False
        if sharding is None:
            continue
        if not divides_on(shape_of(value), sharding, meshes):
            return False
    return True


def resolve(module: ir.Module, options: dict, ctx, ops: list | None = None):
    """The pass on the facts of `ops` (None: of every op of the module)."""
    facts = explicit_facts(module, ops)
    with module.context:
        add_slice_and_pad_attributes(facts)
        add_conv_windows(facts)
        add_sharding_rules(facts, lambda op: (op.name.startswith("stablehlo.") and op.name != "stablehlo.return")
                           or op.name == "chlo.top_k")
        reshapes = {"reshape_group": list(_reshape_groups(facts)), "reshape_same_layout": list(_same_layouts(facts))}
        reshapes.update(_reshape_splits(facts, reshapes["reshape_group"]))
        reshapes["reshape_group_same_axes"] = list(_same_group_axes(facts, reshapes["reshape_group"]))
        reshapes["sorted_dim"] = list(_sorted_dims(facts))
        reshapes["option"] = [("halo", int(options["enable-halo-exchange"]))]
        reshapes["reversed_dim"] = [(op_id, d) for op_id, op in enumerate(facts.ops) if op.name == "stablehlo.reverse"
                                    for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])]
        reshapes["concat_dim"] = [(op_id, ir.IntegerAttr(op.attributes["dimension"]).value)
                                  for op_id, op in enumerate(facts.ops) if op.name == "stablehlo.concatenate"]
    answers = run_rules("permutation", facts, reshapes)
    cleared = defaultdict(set)                  # op id -> {(tensor, dim)}
    for op_id, t, d in answers.select("cleared_dim", "op", "tensor", "dim", ordered=True):
        cleared[op_id].add((t, d))
    meshes = dict(answers.select("op_mesh", "op", "mesh"))
    for op_id in cleared:   # (a reshape's mesh is its operand's)
        if op_id not in meshes:
            meshes[op_id] = facts.reader.sharding_of(facts.ops[op_id].operands[0]).mesh
    halo_dims = defaultdict(dict)              # op id -> {dim: HaloDim}
    for h in answers.named("halo_dim", ordered=True):
        halo_dims[h.op][h.dim] = HaloDim(h.s_in, h.s_out, h.low, h.dilation, h.left, h.right, h.comm)
    reverses = defaultdict(dict)               # op id -> {reversed sharded dim: shift}
    for op_id, d, shift in answers.select("reverse_dim", "op", "dim", "shift", ordered=True):
        reverses[op_id][d] = shift
    reshape_halos = _reshape_halos(answers, reshapes["reshape_group"])
    local_updates = {op_id for op_id, in answers.select("dus_local", "op")}
    update_cleared = defaultdict(set)          # op id -> {cut dimension of the update}
    for op_id, d in answers.select("dus_update_cleared", "op", "dim"):
        update_cleared[op_id].add(d)
    window_sums = _window_sums(answers)
    changed = False
    with module.context, ir.Location.unknown():
        exchange = (HaloExchange(module, facts.meshes, options["replica-count"] > 1)
                    if halo_dims or reverses or reshape_halos or local_updates or window_sums else None)
        for op_id in sorted(set(cleared) | set(halo_dims) | set(reverses) | set(reshape_halos) | local_updates
                            | set(window_sums)):
            if op_id in window_sums:
                op = facts.ops[op_id]
                _reshard_around(op, window_sums[op_id][1], meshes[op_id])
                sum_window(exchange, op, window_sums[op_id][0], facts.meshes[meshes[op_id]],
                           getattr(ctx, "filename", None))
                changed = True
            elif op_id in local_updates:
                op = facts.ops[op_id]
                if update_cleared[op_id]:
                    update = irs.sharding_of(op.operands[1])
                    reshard_operand(op, 1, _without_dims(update, update_cleared[op_id]).to_attr())
                local_update(exchange, op, irs.resolve_mesh(irs.sharding_of(op.operands[0]), facts.meshes))
                changed = True
            elif op_id in reshape_halos:
                exchange.reshape(facts.ops[op_id], *reshape_halos[op_id])
                changed = True
            elif op_id in halo_dims:
                exchange.resolve(facts.ops[op_id], halo_dims[op_id])
                changed = True
            elif op_id in reverses:
                exchange.reverse(facts.ops[op_id], reverses[op_id])
                changed = True
            else:
                changed |= _reshard_around(facts.ops[op_id], cleared[op_id], meshes[op_id])
    return None if changed else PRESERVED


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
            reshard_operand(op, i, new.to_attr())
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
            reshard_result_back(op, r, old.to_attr(), after)
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


# Custom calls that sort their operands along one dimension and keep some
# of each row (jax.lax.top_k's on TPU and GPU, approx_max_k's / approx_min_k's).
_TOP_K_CALLS = {"mhlo.topk", "ApproxTopK", "PartialReduce"}


def _sorted_dims(facts):
    """sorted_dim rows: the dimension each top-k of the facts sorts (the
    last of chlo.top_k and mhlo.topk; ApproxTopK's and PartialReduce's
    reduction_dim, from mhlo.backend_config or a JSON backend_config)."""
    for op_id, op in enumerate(facts.ops):
        if op.name == "chlo.top_k":
            yield (op_id, len(shape_of(op.operands[0])) - 1)
        elif op.name == "stablehlo.custom_call" and "call_target_name" in op.attributes:
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target == "mhlo.topk":
                yield (op_id, len(shape_of(op.operands[0])) - 1)
            elif target in _TOP_K_CALLS:
                dim = reduction_dim(op)
                if dim is not None:
                    yield (op_id, dim)


def _reshape_groups(facts):
    """reshape_group rows of every reshape of the facts (see _groups)."""
    for op_id, op in enumerate(facts.ops):
        if op.name == "stablehlo.reshape":
            for g, group in enumerate(_groups(op)):
                yield (op_id, g) + group


def _groups(op) -> list[tuple]:
    """Reshape `op`'s dimensions cut where the operand's and the result's
    leading sizes agree, taking at least one dimension of each side per
    group (as Shardy's buildReshapeGroupInfos): (in_start, in_end,
    out_start, out_end, in_nontrivial, out_nontrivial) per group."""
    ins = list(ir.RankedTensorType(op.operands[0].type).shape)
    outs = list(ir.RankedTensorType(op.results[0].type).shape)
    groups = []
    i = j = 0
    while i < len(ins) or j < len(outs):
        i0, j0 = i, j
        pi = ins[i] if i < len(ins) else 1
        po = outs[j] if j < len(outs) else 1
        i, j = min(i + 1, len(ins)), min(j + 1, len(outs))
        while pi != po and (i < len(ins) or j < len(outs)):
            if pi < po and i < len(ins):
                pi *= ins[i]
                i += 1
            elif po < pi and j < len(outs):
                po *= outs[j]
                j += 1
            else:
                break
        groups.append((i0, i, j0, j, sum(n != 1 for n in ins[i0:i]), sum(n != 1 for n in outs[j0:j])))
    return groups


def _same_group_axes(facts, groups):
    """reshape_group_same_axes rows: the groups of each reshape whose operand
    and result dimensions carry the same axes in the same order."""
    for op_id, g, i0, i1, j0, j1, _, _ in groups:
        op = facts.ops[op_id]
        if _same_axes(op, i0, i1, j0, j1, facts.reader, facts.meshes):
            yield (op_id, g)


def _same_axes(op, i0, i1, j0, j1, reader, meshes) -> bool:
    """Operand dimensions [i0, i1) and result dimensions [j0, j1) of reshape
    `op` carry the same axes in the same order (sub-axes cut alike; no
    sharding: no axes). A dimension of size 1 counts for none: its one row
    lives on its first shard whatever axes it has, which
    -sdy-pad-for-divisibility gathers where the result needs it
    (rules/partition/padding.dl restores_unit_dim)."""
    ins, outs = reader.sharding_of(op.operands[0]), reader.sharding_of(op.results[0])
    in_shape, out_shape = shape_of(op.operands[0]), shape_of(op.results[0])
    in_axes = [a for d in range(i0, i1) if in_shape[d] != 1 for a in ins.dims[d].axes] if ins is not None else []
    out_axes = [a for d in range(j0, j1) if out_shape[d] != 1 for a in outs.dims[d].axes] if outs is not None else []
    if in_axes == out_axes:
        return True
    if ins is None or outs is None or ins.mesh != outs.mesh:
        return False
    mesh = irs.resolve_mesh(ins, meshes)
    atoms = atomic_axes(mesh, in_axes + out_axes)
    return expand_to_atomic(in_axes, atoms, mesh) == expand_to_atomic(out_axes, atoms, mesh)


def _misaligned_reshape(op, reader, meshes) -> bool:
    """Some group of reshape `op` has not the same axes on both sides."""
    try:
        return not all(_same_axes(op, i0, i1, j0, j1, reader, meshes) for i0, i1, j0, j1, _, _ in _groups(op))
    except SdylogError:
        return True


def _same_layouts(facts):
    """reshape_same_layout rows: reshapes whose operand and result shardings
    place the same axes at the same strides (see _axis_strides)."""
    for op_id, op in enumerate(facts.ops):
        if op.name != "stablehlo.reshape":
            continue
        ins, outs = facts.reader.sharding_of(op.operands[0]), facts.reader.sharding_of(op.results[0])
        if ins is None or outs is None or ins.mesh != outs.mesh:
            continue
        mesh = irs.resolve_mesh(ins, facts.meshes)
        a = _axis_strides(ins, ir.RankedTensorType(op.operands[0].type).shape, mesh)
        b = _axis_strides(outs, ir.RankedTensorType(op.results[0].type).shape, mesh)
        if a == b:
            yield (op_id,)


def _axis_strides(sharding: TensorSharding, shape, mesh) -> list:
    """Each axis of the sharding with the stride (in elements of the
    row-major tensor, blocks rounded up) at which the devices along it
    start; runs of sub-axes of one axis at consecutive strides merged."""
    sizes = mesh.axis_sizes
    strides = []
    below = 1
    for i in reversed(range(len(shape))):
        axes = sharding.dims[i].axes
        shards = 1
        for a in axes:
            shards *= a.size(sizes[a.name])
        stride = below * -(-shape[i] // shards)
        for a in reversed(axes):
            strides.append((stride, a))
            stride *= a.size(sizes[a.name])
        below *= shape[i]
    strides.sort(key=lambda e: e[0])
    merged = []
    for stride, a in strides:
        if merged:
            prev_stride, prev = merged[-1]
            full = sizes[a.name]
            lo, hi = a.interval(full)
            prev_lo, prev_hi = prev.interval(full) if prev.name == a.name else (0, 0)
            if prev.name == a.name and hi == prev_lo and stride == prev_stride * prev.size(full):
                merged[-1] = (prev_stride, AxisRef.of_interval(a.name, lo, prev_hi, full))
                continue
        merged.append((stride, a))
    return merged


def _reshape_splits(facts, groups):
    """reshape_split and reshape_target_start rows: the groups of a reshape
    that split one operand dimension into several result dimensions, none of
    size 1, sharded by the same axes in the same order (sub-axes cut
    alike); and where each shard of those result dimensions starts in the
    split dimension (Shardy's getLinearDataStartOffsetForShardIdx)."""
    splits, starts = [], []
    for op_id, g, i0, i1, j0, j1, ni, no in groups:
        if i1 - i0 != 1 or ni != 1 or no != j1 - j0 or no < 2:
            continue
        op = facts.ops[op_id]
        ins, outs = facts.reader.sharding_of(op.operands[0]), facts.reader.sharding_of(op.results[0])
        if ins is None or outs is None or ins.mesh != outs.mesh:
            continue
        mesh = irs.resolve_mesh(ins, facts.meshes)
        in_axes = list(ins.dims[i0].axes)
        out_axes = [a for d in range(j0, j1) for a in outs.dims[d].axes]
        atoms = atomic_axes(mesh, in_axes + out_axes)
        if expand_to_atomic(in_axes, atoms, mesh) != expand_to_atomic(out_axes, atoms, mesh):
            continue
        out_shape = list(ir.RankedTensorType(op.results[0].type).shape)
        shards = [axes_size(outs.dims[d].axes, mesh) for d in range(j0, j1)]
        tiles = [-(-out_shape[d] // k) for d, k in zip(range(j0, j1), shards)]
        volume = 1
        for t, k in zip(tiles, shards):
            volume *= t * k
        splits.append((op_id, g, i0, volume))
        strides = [1] * no
        for i in reversed(range(no - 1)):
            strides[i] = strides[i + 1] * out_shape[j0 + i + 1]
        for t in range(int(np.prod(shards))):
            coords = np.unravel_index(t, shards)
            starts.append((op_id, g, t, int(sum(c * tile * stride for c, tile, stride in zip(coords, tiles, strides)))))
    return {"reshape_split": splits, "reshape_target_start": starts}


def _reshape_halos(answers, groups) -> dict:
    """Halo reshapes by op id: their groups (reshape_halo_dim) with the
    result dimensions they split into and each shard's window offset, and the
    (tensor, dimension) pairs whose axes are manual."""
    out_dims = {(op_id, g): tuple(range(j0, j1)) for op_id, g, _, _, j0, j1, _, _ in groups}
    offsets = defaultdict(dict)
    for op_id, g, t, offset in answers.select("reshape_halo_offset", "op", "group", "t", "offset", ordered=True):
        offsets[(op_id, g)][t] = offset
    manual = defaultdict(set)                  # op id -> {(tensor, dim)} whose axes are manual
    for op_id, t, d in answers.select("reshape_halo_manual_dim", "op", "tensor", "dim", ordered=True):
        manual[op_id].add((t, d))
    halos = defaultdict(list)
    for op_id, g, d, tile, left, right, comm in answers.select("reshape_halo_dim", "op", "group", "dim", "tile", "left",
                                                               "right", "comm", ordered=True):
        table = offsets[(op_id, g)]
        halos[op_id].append(ReshapeHaloGroup(d, out_dims[(op_id, g)], tile, left, right, bool(comm),
                                             tuple(table[t] for t in sorted(table))))
    return {op_id: (groups, manual[op_id]) for op_id, groups in halos.items()}


def _window_sums(answers) -> dict:
    """Convolutions summed over sharded windows by op id: their dimensions
    (conv_sum, conv_sum_offset) and the (tensor, dimension) pairs whose axes
    are cleared first (conv_sum_cleared)."""
    offsets = defaultdict(dict)
    for op_id, od, t, offset in answers.select("conv_sum_offset", "op", "out_dim", "t", "offset", ordered=True):
        offsets[(op_id, od)][t] = offset
    cleared = defaultdict(set)
    for op_id, t, d in answers.select("conv_sum_cleared", "op", "tensor", "dim", ordered=True):
        cleared[op_id].add((t, d))
    sums = defaultdict(list)
    for row in answers.select("conv_sum", "op", "out_dim", "summed", "window", "left", "right", "low", "high",
                              "dilation", ordered=True):
        op_id, od = row[0], row[1]
        table = offsets[(op_id, od)]
        sums[op_id].append(SumDim(row[1], bool(row[2]), *row[3:], tuple(table[t] for t in sorted(table))))
    return {op_id: (dims, cleared[op_id]) for op_id, dims in sums.items()}
