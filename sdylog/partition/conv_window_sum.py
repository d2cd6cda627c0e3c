"""A convolution worked on in blocks of a sharded window dimension
(-sdy-resolve-permutation-factors; rules/partition/permutation.dl
conv_sum). Either the kernel's spatial dimension is sharded on a
reduction factor it shares with the input (the weight gradient of a
convolution whose image is sharded on a spatial dimension): each device
sums over its block of the kernel's window (conv_sum_dim); or the input
and the result are sharded alike there (a forward convolution or input
gradient, with halo exchange): each device makes its block of the result
(conv_block_dim). Either way a device's window reads input rows past its
own block:

    the operands padded high (zeros) to a multiple of their shards
    sdy.manual_computation(input, kernel) over every axis of their shardings {
      per such dimension, this device's buffer of input rows: its block
      with the `left` rows before it and `right` after it from its
      neighbours (collective_permute of only the rows read of the farthest
      block; zeros past either end), or the whole input padded by `low`
      and `high` (the rules cleared its axes there); dilated by the input's
      lhs dilation (an interior pad); and `window` positions of it cut at
      this device's offset (a table by its shard index along the
      dimension's axes)
      the convolution on those and the kernel's block, unpadded and
      undilated there, with the group counts of its blocks
    }: partial sums over the axes the result does not carry (out_sharding
    unreduced on them), sliced back to the result's type

The all_reduce insert-explicit-reshards put after the convolution adds them
up. The kernel's padding rows are zeros, so the window rows they meet count
for nothing, as do the padded input features.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as shlo

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import create_op
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs
from sdylog.partition.build import Builder, dense_i64_array, element_of, i64, i64_attr, shape_of, tensor, zeros
from sdylog.partition.halo import HaloExchange, manual_computation, manual_local_shape, shift_pairs
from sdylog.partition.local_update import pad_high
from sdylog.partition.shards import axes_size, local_group_count


@dataclass(frozen=True)
class SumDim:
    """A window dimension summed in blocks (rules/partition/permutation.dl conv_sum)."""
    out_dim: int
    summed: bool     # the kernel's blocks summed over (else the result's blocks cut)
    window: int      # positions of the dilated input each device's window reads
    left: int        # rows read before this device's block (a halo)
    right: int       # rows read after it (a halo)
    low: int         # the whole input's padding before its window (gathered)
    high: int        # ... and after
    dilation: int    # the input's (lhs) dilation: the buffer's rows spread out
    offsets: tuple[int, ...]   # per shard index: where its window starts in its buffer


def sum_window(exchange: HaloExchange, op, dims: list[SumDim], mesh: Mesh, filename: str | None = None) -> None:
    """Rewrites convolution `op` as each device's partial sum over its blocks of the windows."""
    lhs, rhs, res = op.operands[0], op.operands[1], op.results[0]
    shardings = [irs.sharding_of(lhs), irs.sharding_of(rhs), irs.op_result_sharding(op, 0)]
    mesh_ref = next(s.mesh for s in shardings if s is not None)
    ls, rs, os_ = [s if s is not None else TensorSharding.replicated_on(mesh_ref, len(shape_of(v)))
                   for s, v in zip(shardings, (lhs, rhs, res))]
    manual = {a.name for s in (ls, rs, os_) for d in s.dims for a in d.axes}
    b = Builder(ir.InsertionPoint(op), op.location)
    lhs = pad_high(b, lhs, _divisible(shape_of(lhs), ls, mesh), ls)
    rhs = pad_high(b, rhs, _divisible(shape_of(rhs), rs, mesh), rs)
    out_shape = _divisible(shape_of(res), os_, mesh)

    kept = [a for d in os_.dims for a in d.axes]
    summed = _not_kept([a for s in (ls, rs) for d in s.dims for a in d.axes] + list(os_.unreduced), kept, mesh)
    partial = replace(os_, unreduced=tuple(summed))
    manual_op, inner = manual_computation(b, [lhs, rhs], [ls, rs], partial, tensor(out_shape, element_of(res)),
                                          manual, mesh)
    block = inner.ip.block
    dn = shlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    spatial = {o: k for k, o in enumerate(dn.output_spatial_dimensions)}
    value = block.arguments[0]
    for s in dims:
        k = spatial[s.out_dim]
        axes = rs.dims[dn.kernel_spatial_dimensions[k]].axes if s.summed else os_.dims[s.out_dim].axes
        value = _window_rows(exchange, inner, value, dn.input_spatial_dimensions[k], s, list(axes), mesh)
    local_out = tensor(manual_local_shape(out_shape, os_, manual, mesh), element_of(res))
    groups = _local_groups(op, dn, ls, rs, mesh, filename)
    conv = _unpadded_conv(inner, op, value, block.arguments[1], [spatial[s.out_dim] for s in dims], local_out, groups)
    create_op("sdy.return", [], [conv], loc=op.location, ip=inner.ip)
    result = manual_op.results[0]
    if out_shape != list(shape_of(res)):
        result = b.leading_slice(result, shape_of(res))
        irs.set_result_sharding(result, partial)
    res.replace_all_uses_with(result)
    op.erase()


def _not_kept(refs, kept, mesh: Mesh) -> list[AxisRef]:
    """The parts of (sub-)axes `refs` that no `kept` (sub-)axis covers, in
    mesh order, adjacent parts merged: what the manual computation's
    result is a partial sum over. An operand's axis the result holds split
    over several dimensions (a grouped convolution: "model" on the input's
    batch, "model":(1)2 on the result's feature and "model":(2)2 on its
    batch) leaves nothing; one the result holds a part of leaves the rest
    (a sub-axis of the input's feature beside the groups)."""
    out = []
    for name, size in mesh.axis_sizes.items():
        spans = [r.interval(size) for r in refs if r.name == name]
        held = [k.interval(size) for k in kept if k.name == name]
        cuts = sorted({x for span in spans + held for x in span})
        parts = [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if any(a <= lo and hi <= b for a, b in spans)
                 and not any(a <= lo and hi <= b for a, b in held)]
        merged = []
        for lo, hi in parts:
            if merged and merged[-1][1] == lo:
                merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        out += [AxisRef.of_interval(name, lo, hi, size) for lo, hi in merged]
    return out


def _divisible(shape, sharding: TensorSharding, mesh: Mesh) -> list[int]:
    """`shape` padded up to a multiple of each dimension's shards."""
    return [-(-n // k) * k for n, k in zip(shape, (axes_size(d.axes, mesh) for d in sharding.dims))]


def _window_rows(exchange: HaloExchange, b: Builder, value, dim: int, s: SumDim, axes, mesh: Mesh):
    """This device's `window` input rows of `dim` (inside the manual
    computation): cut at its offset from its buffer (see the module docstring)."""
    rows = shape_of(value)[dim]
    before, after = -(-s.left // rows), -(-s.right // rows)   # hops
    pieces = []
    for hop in list(range(before, 0, -1)) + [0] + list(range(-1, -after - 1, -1)):
        if hop == 0:
            pieces.append(value)
            continue
        # (the farthest block on each side: only the rows read of it)
        far = s.left - (hop - 1) * rows if hop > 0 else s.right - (-hop - 1) * rows
        piece = value if far >= rows else _rows(b, value, dim, rows - far if hop > 0 else 0, far)
        pairs = shift_pairs(mesh, axes, hop)
        if pairs:
            pieces.append(b.collective_permute(piece, pairs, exchange.channel()))
        else:   # (every block that far is past an end)
            pieces.append(b.broadcast(b.constant(zeros(tensor((), element_of(piece)))), list(shape_of(piece)), []))
    buffer = b.concatenate(pieces, dim) if len(pieces) > 1 else value
    if s.low or s.high or s.dilation > 1:   # (dilated: each row followed by dilation - 1 zeros)
        rank = len(shape_of(buffer))
        low, high, interior = [0] * rank, [0] * rank, [0] * rank
        low[dim], high[dim], interior[dim] = s.low, s.high + s.dilation - 1, s.dilation - 1
        shape = list(shape_of(buffer))
        shape[dim] = s.low + shape[dim] * s.dilation + s.high
        buffer = b.pad(buffer, b.constant(zeros(tensor((), element_of(value)))), low, high, interior, shape)
    device = b.device_id(exchange.use_replica_id)
    offset = b.table_lookup(list(s.offsets), exchange.index_in_group(b, device, mesh, axes))
    zero = b.constant(zeros(tensor((), i64())))
    starts = [zero] * len(shape_of(buffer))
    starts[dim] = offset
    sizes = list(shape_of(buffer))
    sizes[dim] = s.window
    return b.dynamic_slice(buffer, starts, sizes)


def _local_groups(op, dn, ls: TensorSharding, rs: TensorSharding, mesh: Mesh, filename) -> dict[str, int]:
    """`op`'s feature and batch group counts on each device's blocks (the
    groups split the kernel's output features, and the input's features or
    batch): the same on both operands' blocks (their group factor sharded
    alike, the other factors of those dimensions minor to it), else an
    error rather than a convolution of mismatched groups."""
    counts = {}
    for name, input_dim in (("feature_group_count", dn.input_feature_dimension),
                            ("batch_group_count", dn.input_batch_dimension)):
        count = ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else 1
        local = set()
        for sharding, dim in ((rs, dn.kernel_output_feature_dimension), (ls, input_dim)):
            shards = axes_size(sharding.dims[dim].axes, mesh)
            local.add(local_group_count(count, shards) if count > 1 else 1)
            if None in local:
                raise error_at(op, f"sdylog cannot sum this convolution's window in blocks: its {name} {count} "
                               f"does not divide into, nor is a divisor of, the {shards} shards of its dimension "
                               f"{dim}", filename)
        if len(local) > 1:
            raise error_at(op, f"sdylog cannot sum this convolution's window in blocks: its {name} {count} splits "
                           f"its operands' blocks into different counts of groups ({sorted(local)})", filename)
        counts[name] = local.pop()
    return counts


def _rows(b: Builder, value, dim: int, start: int, count: int):
    """Rows [start, start + count) of `value` along `dim`."""
    shape = list(shape_of(value))
    starts, limits = [0] * len(shape), list(shape)
    starts[dim], limits[dim] = start, start + count
    shape[dim] = count
    return b.one("stablehlo.slice", [value], tensor(shape, element_of(value)),
                 {"start_indices": dense_i64_array(starts), "limit_indices": dense_i64_array(limits),
                  "strides": dense_i64_array([1] * len(shape))})


def _unpadded_conv(b: Builder, op, lhs, rhs, spatial: list[int], result_type, groups: dict[str, int]):
    """`op`'s convolution of lhs and rhs, giving `result_type`, without
    padding or input dilation on the `spatial` window dimensions (their
    input rows are the window's already), with group counts `groups`."""
    attrs = {n: op.attributes[n] for n in op.attributes if n != "sdy.sharding"}
    count = len(shlo.ConvDimensionNumbers(attrs["dimension_numbers"]).input_spatial_dimensions)
    padding = np.zeros((count, 2), dtype=np.int64)
    if "padding" in attrs:
        padding = np.array(ir.DenseIntElementsAttr(attrs["padding"]), dtype=np.int64).reshape(count, 2)
    dilation = list(ir.DenseI64ArrayAttr(attrs["lhs_dilation"])) if "lhs_dilation" in attrs else [1] * count
    for k in spatial:
        padding[k] = (0, 0)
        dilation[k] = 1
    attrs["padding"] = ir.DenseElementsAttr.get(padding, type=tensor((count, 2), i64()))
    if "lhs_dilation" in attrs:
        attrs["lhs_dilation"] = ir.DenseI64ArrayAttr.get(dilation)
    attrs.update({name: i64_attr(n) for name, n in groups.items() if name in attrs or n != 1})
    return b.one("stablehlo.convolution", [lhs, rhs], result_type, attrs)
