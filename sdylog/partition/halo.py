"""The halo exchange of a pad, slice or reshape whose sharded dimensions need
their neighbours' data (-sdy-resolve-permutation-factors with
enable-halo-exchange); the reverse of sharded dimensions.

rules/partition/permutation.dl decides which ops and gives, per sharded
dimension, the numbers (HaloDim). This module builds the IR, op for op as
Shardy's resolve_permutation_factors.cc does (so that its lit tests match):

    x padded high to a multiple of its shards
    sdy.manual_computation(x, pad value) over the dimensions' axes {
      per dimension needing data: the blocks `left`..1 hops to the left
      (collective_permute), its own, 1..`right` to the right, concatenated,
      padded by the output window on both sides (interior: the pad's),
      and this device's window cut at
          max(shard index * (s_out - s_in * dilation) + base, 0)
      the op's padding or slicing on the dimensions it keeps whole
    }
    the result sliced back to the op's type
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as shlo

from sdylog.ir.collectives import create_reshard
from sdylog.ir.rewrite import create_op
from sdylog.ir.walk import walk_ops
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import DimSharding, TensorSharding, sharding_per_value_attr
from sdylog.partition import ir_shardings as irs
from sdylog.partition.build import Builder, dense_i64_array, element_of, i64, shape_of, tensor, zeros
from sdylog.partition.shards import axes_size, axis_size, shard_index


@dataclass(frozen=True)
class HaloDim:
    """A sharded dimension of a halo op (rules/partition/permutation.dl halo_dim)."""
    s_in: int        # elements of the (padded) operand per device
    s_out: int       # elements of the result per device
    low: int         # the pad's low padding, or minus the slice's start
    dilation: int    # the pad's interior padding + 1
    left: int        # hops to the leftmost block needed
    right: int       # hops to the rightmost block needed
    comm: int        # 1 when each device cuts its window from its buffer (halo_cut_dim)


@dataclass(frozen=True)
class ReshapeHaloGroup:
    """A group of a halo reshape (rules/partition/permutation.dl
    reshape_halo_dim, reshape_halo_offset): operand dimension `dim` split into
    result dimensions `out_dims`."""
    dim: int
    out_dims: tuple[int, ...]
    tile: int        # elements of the split dimension per device (padded)
    left: int        # hops to the leftmost block needed
    right: int       # hops to the rightmost block needed
    comm: bool       # some device needs other devices' data
    offsets: tuple[int, ...]   # per shard of out_dims: where its window starts in its buffer


class HaloExchange:
    def __init__(self, module: ir.Module, meshes: dict[str, Mesh], use_replica_id: bool):
        self.module = module
        self.meshes = dict(meshes)
        self.use_replica_id = use_replica_id
        self.reversed_meshes: dict[Mesh, str] = {}
        top = 0
        for op in walk_ops(module.operation):
            if "channel_handle" in op.attributes:
                top = max(top, shlo.ChannelHandle(op.attributes["channel_handle"]).handle)
        self.next_channel = top + 1

    def channel(self) -> int:
        c = self.next_channel
        self.next_channel += 1
        return c

    # ------------------------------------------------------------------ the op
    def resolve(self, op, dims: dict[int, HaloDim]) -> None:
        x = op.operands[0]
        sharding = irs.sharding_of(x)
        mesh = irs.resolve_mesh(sharding, self.meshes)
        is_pad = op.name == "stablehlo.pad"
        rank = len(shape_of(x))
        shards = [axes_size(sharding.dims[d].axes, mesh) for d in range(rank)]
        divisible = [-(-n // k) * k for n, k in zip(shape_of(x), shards)]
        manual = {a.name for d in range(rank) if shards[d] > 1 for a in sharding.dims[d].axes}
        b = Builder(ir.InsertionPoint(op), op.location)
        pad_value = op.operands[1] if is_pad else None
        if list(divisible) != list(shape_of(x)):
            if pad_value is None:
                pad_value = b.constant(zeros(tensor((), element_of(x))))
            x = b.pad(x, pad_value, [0] * rank, [m - n for m, n in zip(divisible, shape_of(x))], [0] * rank, divisible)
            irs.set_result_sharding(x, sharding)
        if pad_value is None or not is_pad:
            pad_value = b.constant(zeros(tensor((), element_of(x))))

        result_type = ir.RankedTensorType(op.results[0].type)
        global_shape = [-(-n // k) * k for n, k in zip(result_type.shape, shards)]
        manual_op, inner = _halo_computation(b, x, pad_value, sharding, sharding,
                                             tensor(global_shape, result_type.element_type), manual, mesh)
        local = dims_without_axes(sharding, manual)
        value, local_pad = inner.ip.block.arguments
        # Shardy's exchange leaves zeros where a block past either end of the
        # dimension would be: right for a zero pad value (and a slice), not
        # for another, which those places must hold instead.
        fill = is_pad and not _is_zero_constant(op.operands[1])
        for d in range(rank):
            if d in dims and dims[d].comm:
                value = self.exchange_dim(inner, value, local_pad, d, dims[d], sharding, mesh, local, fill)
        value = (_pad_kept_dims if is_pad else _slice_kept_dims)(inner, value, local_pad, op, shards, local,
                                                                [n // k for n, k in zip(global_shape, shards)])
        create_op("sdy.return", [], [value], loc=op.location, ip=inner.ip)
        result = manual_op.results[0]
        if global_shape != list(result_type.shape):
            result = b.leading_slice(result, result_type.shape)
            irs.set_result_sharding(result, sharding)
        op.results[0].replace_all_uses_with(result)
        op.erase()

    # ------------------------------------------------------------------ reshape
    def reshape(self, op, groups: list[ReshapeHaloGroup], manual_dims: set) -> None:
        """A reshape splitting unevenly sharded dimensions (Shardy's
        handleReshapeHaloExchange): the operand padded high to its shards,
        then in a manual computation over the groups' axes each split
        dimension's window (`tile` elements from where the device's result
        block starts: its own block and its neighbours', its offset from a
        table by its index along the result dimensions' axes), reshaped
        locally; the result sliced back to the op's type. `manual_dims`:
        the (0 operand / 1 result, dimension) pairs whose axes the manual
        computation takes, those of every group with an indivisible
        dimension (pass-through ones too, as Shardy's nonDivisibleAxes). Elements the
        result's padding holds are whatever the window had there."""
        x, res = op.operands[0], op.results[0]
        in_sharding, out_sharding = irs.sharding_of(x), irs.sharding_of(res)
        mesh = irs.resolve_mesh(in_sharding, self.meshes)
        manual = {a.name for t, d in manual_dims for a in (in_sharding, out_sharding)[t].dims[d].axes}
        b = Builder(ir.InsertionPoint(op), op.location)
        pad_value = b.constant(zeros(tensor((), element_of(x))))
        in_shards = [axes_size(d.axes, mesh) for d in in_sharding.dims]
        divisible = [-(-n // k) * k for n, k in zip(shape_of(x), in_shards)]
        if divisible != list(shape_of(x)):
            rank = len(divisible)
            zero = b.constant(zeros(tensor((), element_of(x))))
            x = b.pad(x, zero, [0] * rank, [m - n for m, n in zip(divisible, shape_of(x))], [0] * rank, divisible)
            irs.set_result_sharding(x, in_sharding)
        result_type = ir.RankedTensorType(res.type)
        out_shards = [axes_size(d.axes, mesh) for d in out_sharding.dims]
        padded_out = [-(-n // k) * k for n, k in zip(result_type.shape, out_shards)]
        manual_op, inner = _halo_computation(b, x, pad_value, in_sharding, out_sharding,
                                             tensor(padded_out, result_type.element_type), manual, mesh)
        local_in = dims_without_axes(in_sharding, manual)
        value, local_pad = inner.ip.block.arguments
        for g in sorted(groups, key=lambda g: g.dim):
            if g.comm:
                target_axes = [a for d in g.out_dims for a in out_sharding.dims[d].axes]
                value = self.exchange_reshape_dim(inner, value, local_pad, g, target_axes, mesh, local_in)
        local_out = inner.reshape(value, manual_local_shape(padded_out, out_sharding, manual, mesh))
        irs.set_result_sharding(local_out, dims_without_axes(out_sharding, manual))
        create_op("sdy.return", [], [local_out], loc=op.location, ip=inner.ip)
        result = manual_op.results[0]
        if padded_out != list(result_type.shape):
            result = b.leading_slice(result, result_type.shape)
            irs.set_result_sharding(result, out_sharding)
        res.replace_all_uses_with(result)
        op.erase()

    def exchange_reshape_dim(self, b: Builder, value, pad_value, g: ReshapeHaloGroup, target_axes, mesh: Mesh,
                             local: TensorSharding):
        """This device's `tile` elements of the split dimension: its buffer
        (its left neighbours' blocks, its own, its right neighbours', padded
        by `tile` on both sides) cut at its offset, looked up by its index
        along the result dimensions' axes."""
        buffer = self.neighbour_buffer(b, value, pad_value, g.dim, g.left, g.right, target_axes, mesh, local,
                                       g.tile, 1, False)
        device = b.device_id(self.use_replica_id)
        index = self.index_in_group(b, device, mesh, target_axes)
        offset = b.table_lookup(list(g.offsets), index)
        zero = b.constant(zeros(tensor((), i64())))
        starts = [zero] * len(shape_of(buffer))
        starts[g.dim] = offset
        sizes = list(shape_of(buffer))
        sizes[g.dim] = g.tile
        window = b.dynamic_slice(buffer, starts, sizes)
        irs.set_result_sharding(window, local)
        return window

    # ------------------------------------------------------------------ reverse
    def reverse(self, op, dims: dict[int, int]) -> None:
        """A reverse of sharded dimensions (`dims`: dimension -> shift): the
        operand's blocks, shifted so that a dimension's padding ends up low,
        reversed on each device; the result lives on a mesh whose device order
        is reversed along those dimensions' axes, and is resharded back."""
        x = op.operands[0]
        sharding = irs.sharding_of(x)
        out_sharding = irs.sharding_of(op.results[0]) or sharding
        mesh = irs.resolve_mesh(sharding, self.meshes)
        original_type = x.type
        b = Builder(ir.InsertionPoint(op), op.location)
        shifted = {d: k for d, k in dims.items() if k}
        # (every dimension padded to a multiple of its shards: a reversed one
        # by its shift; another too, else the manual computation's free axes
        # would not divide it, and -sdy-pad-for-divisibility leaves manual
        # computations as they are)
        shape = [-(-n // k) * k for n, k in zip(shape_of(x), (axes_size(list(d.axes), mesh) for d in sharding.dims))]
        grown = shape != list(shape_of(x))
        if grown:
            zero = b.constant(zeros(tensor((), element_of(x))))
            x = b.pad(x, zero, [0] * len(shape), [m - n for m, n in zip(shape, shape_of(x))], [0] * len(shape), shape)
            irs.set_result_sharding(x, sharding)
        if shifted:
            x = self.shift_right(b, x, shifted, sharding, mesh, op.location)
        reversed_axes = [a for d in sorted(dims) for a in sharding.dims[d].axes]
        name = self.reversed_mesh(mesh, reversed_axes, sharding.mesh if isinstance(sharding.mesh, str) else "mesh")
        op.operands[0] = x
        op.attributes["sdy.sharding"] = sharding_per_value_attr([replace(sharding, mesh=name)])
        if grown:
            op.results[0].set_type(x.type)
        after = Builder(ir.InsertionPoint.after(op), op.location)
        result = op.results[0]
        back = create_reshard(result, out_sharding.to_attr(), loc=op.location, ip=after.ip).results[0]
        final = back
        if grown:
            final = after.leading_slice(back, ir.RankedTensorType(original_type).shape)
            irs.set_result_sharding(final, sharding)
        result.replace_all_uses_except(final, back.owner.operation)

    def shift_right(self, b: Builder, x, shifts: dict[int, int], sharding: TensorSharding, mesh: Mesh, loc):
        """x's data moved `shifts[d]` elements right along each dimension d,
        across the devices of its axes (a manual computation)."""
        manual = {a.name for d in shifts for a in sharding.dims[d].axes}
        manual_op, inner = manual_computation(Builder(b.ip, loc), [x], [sharding], sharding, x.type, manual, mesh)
        local = dims_without_axes(sharding, manual)
        value = inner.ip.block.arguments[0]
        for d, shift in shifts.items():
            value = self.shift_dim(inner, value, d, shift, [a for a in sharding.dims[d].axes if a.name in manual],
                                   mesh, local)
        create_op("sdy.return", [], [value], loc=loc, ip=inner.ip)
        return manual_op.results[0]

    def shift_dim(self, b: Builder, value, dim: int, shift: int, axes, mesh: Mesh, local: TensorSharding):
        """Each device's block along `dim` becomes the last `shift` elements of
        the block `shift` elements to its left followed by its own first ones."""
        shape = list(shape_of(value))
        size = shape[dim]
        hops, fraction = divmod(shift, size)

        def moved(offset):
            if offset == 0:
                return value
            pairs = shift_pairs(mesh, axes, offset)
            if not pairs:
                out = b.broadcast(b.constant(zeros(tensor((), element_of(value)))), shape, [])
            else:
                out = b.collective_permute(value, pairs, self.channel())
            irs.set_result_sharding(out, local)
            return out

        head, tail = moved(hops), moved(hops + 1)
        keep = size - fraction
        rank = len(shape)
        tail_start = [0] * rank
        tail_start[dim] = keep
        tail_shape = list(shape)
        tail_shape[dim] = fraction
        tail_piece = b.one("stablehlo.slice", [tail], tensor(tail_shape, element_of(value)),
                           {"start_indices": dense_i64_array(tail_start), "limit_indices": dense_i64_array(shape),
                            "strides": dense_i64_array([1] * rank)})
        irs.set_result_sharding(tail_piece, local)
        head_limit = list(shape)
        head_limit[dim] = keep
        head_piece = b.one("stablehlo.slice", [head], tensor(head_limit, element_of(value)),
                           {"start_indices": dense_i64_array([0] * rank), "limit_indices": dense_i64_array(head_limit),
                            "strides": dense_i64_array([1] * rank)})
        irs.set_result_sharding(head_piece, local)
        out = b.concatenate([tail_piece, head_piece], dim)
        irs.set_result_sharding(out, local)
        return out

    def reversed_mesh(self, mesh: Mesh, axes, base: str) -> str:
        """The symbol of `mesh` with its device order reversed along `axes`
        (made once, at the top of the module, named BASE_reversed[_N])."""
        sizes = [a.size for a in mesh.axes]
        names = [a.name for a in mesh.axes]
        ids = list(mesh.devices())
        new_ids = []
        for i in range(mesh.num_devices):
            coords = list(np.unravel_index(i, sizes))
            new = list(coords)
            for a in axes:
                k = names.index(a.name)
                full = sizes[k]
                size = axis_size(a, mesh)
                post = full // a.interval(full)[1]
                sub = (coords[k] // post) % size
                new[k] += (size - 1 - 2 * sub) * post
            new_ids.append(ids[int(np.ravel_multi_index(new, sizes))])
        reversed_ = Mesh(mesh.axes, tuple(new_ids))
        if reversed_ in self.reversed_meshes:
            return self.reversed_meshes[reversed_]
        name, n = f"{base}_reversed", 0
        while name in self.meshes:
            name, n = f"{base}_reversed_{n}", n + 1
        body = self.module.body
        first = next(iter(body.operations), None)
        ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(body)
        create_op("sdy.mesh", [], [], {"sym_name": ir.StringAttr.get(name), "mesh": reversed_.to_attr()}, ip=ip)
        self.meshes[name] = reversed_
        self.reversed_meshes[reversed_] = name
        return name

    # ------------------------------------------------------------------ one dimension
    def exchange_dim(self, b: Builder, value, pad_value, dim: int, h: HaloDim, sharding: TensorSharding,
                     mesh: Mesh, local: TensorSharding, fill: bool):
        """This device's output window of `dim`, from its own and its neighbours' blocks
        (`fill`: a block no device sends holds the pad value, not zeros)."""
        axes = list(sharding.dims[dim].axes)
        buffer = self.neighbour_buffer(b, value, pad_value, dim, h.left, h.right, axes, mesh, local,
                                       h.s_out * h.dilation, h.dilation, fill)
        device = b.device_id(self.use_replica_id)
        index = self.index_in_group(b, device, mesh, axes)
        s_in_dilated = h.s_in * h.dilation
        step = b.scalar(h.s_out - s_in_dilated, i64())
        base = b.scalar(-h.low + h.left * s_in_dilated + h.s_out * h.dilation, i64())
        offset = b.binary("add", b.binary("multiply", index, step), base)
        zero = b.constant(zeros(tensor((), i64())))
        offset = b.binary("maximum", offset, zero)
        starts = [zero] * len(shape_of(buffer))
        starts[dim] = offset
        sizes = list(shape_of(buffer))
        sizes[dim] = h.s_out
        window = b.dynamic_slice(buffer, starts, sizes)
        irs.set_result_sharding(window, local)
        return window

    def neighbour_buffer(self, b: Builder, value, pad_value, dim: int, left: int, right: int, axes, mesh: Mesh,
                         local: TensorSharding, edge: int, dilation: int, fill: bool):
        """The blocks `left`..1 hops to the left along `axes`
        (collective_permute), this device's own, 1..`right` to the right,
        concatenated on `dim`, padded by `edge` on both sides (interior:
        dilation - 1); `fill`: a block no device sends holds the pad value,
        not zeros."""
        pieces = []
        for offset in list(range(left, 0, -1)) + [0] + list(range(-1, -right - 1, -1)):
            if offset == 0:
                pieces.append(value)
                continue
            pairs = shift_pairs(mesh, axes, offset)
            if not pairs:
                pieces.append(value)
                continue
            piece = b.collective_permute(value, pairs, self.channel())
            irs.set_result_sharding(piece, local)
            receivers = {t for _, t in pairs}
            if fill and len(receivers) < mesh.num_devices:
                piece = self.pad_value_where_nothing_came(b, piece, pad_value, receivers, mesh, local)
            pieces.append(piece)
        buffer = b.concatenate(pieces, dim)
        irs.set_result_sharding(buffer, local)
        shape = list(shape_of(buffer))
        low, high, interior = [0] * len(shape), [0] * len(shape), [0] * len(shape)
        low[dim] = high[dim] = edge
        interior[dim] = dilation - 1
        padded_shape = list(shape)
        padded_shape[dim] = (shape[dim] - 1) * dilation + 1 + 2 * edge
        buffer = b.pad(buffer, pad_value, low, high, interior, padded_shape)
        irs.set_result_sharding(buffer, local)
        return buffer

    def pad_value_where_nothing_came(self, b: Builder, piece, pad_value, receivers: set, mesh: Mesh,
                                     local: TensorSharding):
        device = b.device_id(self.use_replica_id)
        received = b.dynamic_slice(b.bool_table([d in receivers for d in range(mesh.num_devices)]), [device], [1])
        shape = list(shape_of(piece))
        received = b.broadcast(received, shape, [0] if shape else [], ir.IntegerType.get_signless(1))
        filler = b.broadcast(pad_value, shape, [])
        for v in (received, filler):
            irs.set_result_sharding(v, local)
        out = b.select(received, piece, filler)
        irs.set_result_sharding(out, local)
        return out

    def index_in_group(self, b: Builder, device, mesh: Mesh, axes) -> ir.Value:
        """The device's shard index along `axes`: a table for a mesh with its own
        device order, else divisions and remainders of the device id."""
        if mesh.device_ids:
            table = [shard_index(d, mesh, axes) for d in range(mesh.num_devices)]
            return b.table_lookup(table, device)
        index = None
        for a in axes:
            size = axis_size(a, mesh)
            minor = 1
            for m in reversed(mesh.axes):
                if m.name == a.name:
                    break
                minor *= m.size
            lo, hi = a.interval(mesh.axis_sizes[a.name])
            divisor = minor * (mesh.axis_sizes[a.name] // hi)
            coord = device
            if divisor > 1:
                coord = b.binary("divide", coord, b.scalar(divisor, i64()))
            if size < mesh.num_devices:
                coord = b.binary("remainder", coord, b.scalar(size, i64()))
            index = coord if index is None else b.binary("add", b.binary("multiply", index, b.scalar(size, i64())), coord)
        return index if index is not None else b.scalar(0, i64())


# ---------------------------------------------------------------------- the dimensions kept whole
def _pad_kept_dims(b: Builder, value, pad_value, op, shards, local, local_out):
    """The pad's own padding on the dimensions no manual axis splits."""
    attrs = op.attributes
    low = list(ir.DenseI64ArrayAttr(attrs["edge_padding_low"]))
    high = list(ir.DenseI64ArrayAttr(attrs["edge_padding_high"]))
    interior = list(ir.DenseI64ArrayAttr(attrs["interior_padding"]))
    keep = [k <= 1 for k in shards]
    lo = [v if k else 0 for v, k in zip(low, keep)]
    hi = [v if k else 0 for v, k in zip(high, keep)]
    it = [v if k else 0 for v, k in zip(interior, keep)]
    if not any(lo + hi + it):
        return value
    out = b.pad(value, pad_value, lo, hi, it, local_out)
    irs.set_result_sharding(out, local)
    return out


def _slice_kept_dims(b: Builder, value, pad_value, op, shards, local, local_out):
    """The slice's own window (with its strides) on the dimensions no manual
    axis splits (the rules send no slice strided on a split one)."""
    attrs = op.attributes
    starts = list(ir.DenseI64ArrayAttr(attrs["start_indices"]))
    limits = list(ir.DenseI64ArrayAttr(attrs["limit_indices"]))
    strides = list(ir.DenseI64ArrayAttr(attrs["strides"]))
    shape = list(shape_of(value))
    new_starts, new_limits, new_strides = [0] * len(shape), list(shape), [1] * len(shape)
    for d, k in enumerate(shards):
        if k <= 1 and (starts[d] != 0 or limits[d] != shape[d] or strides[d] != 1):
            new_starts[d], new_limits[d], new_strides[d] = starts[d], limits[d], strides[d]
    if new_starts == [0] * len(shape) and new_limits == shape and new_strides == [1] * len(shape):
        return value
    out_shape = [-(-(lim - st) // step) for st, lim, step in zip(new_starts, new_limits, new_strides)]
    out = b.one("stablehlo.slice", [value], tensor(out_shape, element_of(value)),
                {"start_indices": dense_i64_array(new_starts), "limit_indices": dense_i64_array(new_limits),
                 "strides": dense_i64_array(new_strides)})
    irs.set_result_sharding(out, local)
    return out


# ---------------------------------------------------------------------- helpers


def dims_without_axes(sharding: TensorSharding, names: set) -> TensorSharding:
    """The sharding's dimensions without the named axes (Shardy's
    removeAxesFromSharding: replicated and unreduced axes stay, unlike
    ir_shardings.without_axes)."""
    return replace(sharding, dims=tuple(DimSharding(tuple(a for a in d.axes if a.name not in names), d.is_closed,
                                                    d.priority) for d in sharding.dims))


def manual_computation(b: Builder, operands, in_shardings, out_sharding: TensorSharding, result_type, manual: set,
                       mesh: Mesh):
    """An `sdy.manual_computation` over the `manual` axes at b, taking
    `operands` (each divisible by its shards) sharded as `in_shardings` and
    giving `result_type` sharded as `out_sharding`; and a builder into its
    body, whose arguments are the operands' local versions."""
    manual_op = create_op(
        "sdy.manual_computation", [result_type], list(operands),
        {"in_shardings": sharding_per_value_attr(list(in_shardings)),
         "out_shardings": sharding_per_value_attr([out_sharding]),
         "manual_axes": manual_axes_attr(mesh, manual)},
        regions=1, loc=b.loc, ip=b.ip)
    block = manual_op.regions[0].blocks.append(
        *[tensor(manual_local_shape(shape_of(v), s, manual, mesh), element_of(v)) for v, s in zip(operands, in_shardings)])
    return manual_op, Builder(ir.InsertionPoint(block), b.loc)


def _halo_computation(b: Builder, x, pad_value, in_sharding: TensorSharding, out_sharding: TensorSharding,
                      result_type, manual: set, mesh: Mesh):
    """The manual computation of a halo exchange: `x` (the operand padded to
    its shards) and the pad value in, `result_type` out."""
    return manual_computation(b, [x, pad_value], [in_sharding, TensorSharding(in_sharding.mesh, ())], out_sharding,
                              result_type, manual, mesh)


def manual_axes_attr(mesh: Mesh, names: set) -> ir.Attribute:
    """#sdy<manual_axes{...}> of the named axes, in mesh order."""
    return ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(f'"{a.name}"' for a in mesh.axes if a.name in names)
                              + "}>")


def manual_local_shape(shape, sharding: TensorSharding, names: set, mesh: Mesh) -> list[int]:
    """A tensor's shape inside a manual computation over the named axes."""
    return [n // axes_size([a for a in d.axes if a.name in names], mesh) for n, d in zip(shape, sharding.dims)]


def _is_zero_constant(value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return False
    attr = ir.DenseElementsAttr(owner.attributes["value"])
    if not attr.is_splat:
        return False
    v = attr.get_splat_value()
    if isinstance(v, ir.IntegerAttr):
        return v.value == 0
    return isinstance(v, ir.FloatAttr) and v.value == 0.0




def shift_pairs(mesh: Mesh, axes, offset: int) -> list[tuple[int, int]]:
    """(source, target) devices when every block moves `offset` shards along
    `axes` (the dimension's axes, the last one minor); blocks shifted past
    either end have no target."""
    sizes = [a.size for a in mesh.axes]
    names = [a.name for a in mesh.axes]
    pairs = []
    for i in range(mesh.num_devices):
        coords = list(np.unravel_index(i, sizes)) if sizes else []
        new = list(coords)
        carry = offset
        for a in reversed(axes):
            if carry == 0:
                break
            k = names.index(a.name)
            full = sizes[k]
            size = axis_size(a, mesh)
            lo, hi = a.interval(full)
            post = full // hi
            sub = (coords[k] // post) % size
            moved = sub + carry
            carry = moved // size
            new[k] += (moved % size - sub) * post
        if carry == 0:
            j = int(np.ravel_multi_index(new, sizes)) if sizes else 0
            ids = mesh.device_ids
            pairs.append((ids[i] if ids else i, ids[j] if ids else j))
    return pairs
