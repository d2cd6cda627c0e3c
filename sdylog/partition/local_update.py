"""A dynamic_update_slice whose operand is sharded on a dimension the update's
window cuts (-sdy-resolve-permutation-factors; rules/partition/permutation.dl
dus_local, dus_update_cleared).

Each device writes the part of the update that falls in its own block:

    x padded high to a multiple of its shards (and the update alike on the
    dimensions it spans whole)
    sdy.manual_computation(x, update, start indices) over x's axes {
      per cut dimension d (block size L, this device's offset o = index * L):
        g = clamp(start, 0, size - update size)         (the op's own clamp)
      the update padded by L on both sides of each cut dimension, cut at
      L + o - g: the rows of this device's block, where the window covers them
      select(g <= o + iota < g + update size on every cut dimension,
             that, x's block)
    }
    the result sliced back to the op's type

A block the window misses cuts its piece anywhere (dynamic_slice clamps)
and the mask keeps x there; rows past the tensor (its padding) are never in
the window. No data moves between devices.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.ir.collectives import create_reshard
from sdylog.ir.rewrite import create_op
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs
from sdylog.partition.build import Builder, element_of, i64, shape_of, tensor, zeros
from sdylog.partition.halo import HaloExchange, dims_without_axes, manual_computation
from sdylog.partition.shards import axes_size


def local_update(exchange: HaloExchange, op, mesh: Mesh) -> None:
    """Rewrites dynamic_update_slice `op` (its update already replicated on the
    cut dimensions) as each device's masked update of its own block."""
    x, update, starts = op.operands[0], op.operands[1], list(op.operands[2:])
    sharding = irs.sharding_of(x)
    result_sharding = irs.op_result_sharding(op, 0) or sharding
    update_sharding = irs.sharding_of(update) or TensorSharding.replicated_on(sharding.mesh, len(shape_of(x)))
    shape, window = list(shape_of(x)), list(shape_of(update))
    rank = len(shape)
    cut = [window[d] < shape[d] for d in range(rank)]
    shards = [axes_size(sharding.dims[d].axes, mesh) for d in range(rank)]
    padded = [-(-n // k) * k for n, k in zip(shape, shards)]
    padded_update = [w if c else p for w, p, c in zip(window, padded, cut)]
    manual = {a.name for dim in sharding.dims for a in dim.axes}
    b = Builder(ir.InsertionPoint(op), op.location)
    x = pad_high(b, x, padded, sharding)
    update = pad_high(b, update, padded_update, update_sharding)

    padded_type = tensor(padded, element_of(x))
    scalar = TensorSharding(sharding.mesh, ())
    manual_op, inner = manual_computation(b, [x, update] + starts,
                                          [sharding, update_sharding] + [scalar] * len(starts), sharding,
                                          padded_type, manual, mesh)
    block = inner.ip.block
    local = dims_without_axes(sharding, manual)
    value = _write_own_rows(exchange, inner, block.arguments[0], block.arguments[1], list(block.arguments[2:]),
                            shape, window, cut, sharding, mesh, local)
    create_op("sdy.return", [], [value], loc=op.location, ip=inner.ip)

    result = manual_op.results[0]
    if padded != shape:
        result = b.leading_slice(result, shape)
        irs.set_result_sharding(result, sharding)
    if result_sharding != sharding:
        result = create_reshard(result, result_sharding.to_attr(), loc=op.location, ip=b.ip).results[0]
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _write_own_rows(exchange: HaloExchange, b: Builder, x, update, starts, shape, window, cut, sharding, mesh,
                    local):
    """This device's block of the updated tensor (see the module docstring)."""
    block = list(shape_of(x))
    rank = len(block)
    device = b.device_id(exchange.use_replica_id)
    zero = b.constant(zeros(tensor((), i64())))
    low, slice_starts, masks = [0] * rank, [zero] * rank, []
    offset_type = tensor(block, i64())
    for d in range(rank):
        if not cut[d]:
            continue
        start = b.clamp(zero, b.convert(starts[d], i64()), b.scalar(shape[d] - window[d], i64()))
        axes = list(sharding.dims[d].axes)
        offset = zero
        if axes:
            offset = b.binary("multiply", exchange.index_in_group(b, device, mesh, axes), b.scalar(block[d], i64()))
        low[d] = block[d]
        slice_starts[d] = b.binary("subtract", b.binary("add", b.scalar(block[d], i64()), offset), start)
        rows = b.binary("add", b.iota(offset_type, d), b.broadcast(offset, block, []))
        first = b.broadcast(start, block, [])
        last = b.broadcast(b.binary("add", start, b.scalar(window[d], i64())), block, [])
        masks.append(b.binary("and", b.compare(rows, first, "GE"), b.compare(rows, last, "LT")))
    pad_value = b.constant(zeros(tensor((), element_of(update))))
    grown = [n + 2 * lo for n, lo in zip(shape_of(update), low)]
    spread = b.pad(update, pad_value, low, low, [0] * rank, grown)
    irs.set_result_sharding(spread, local)
    piece = b.dynamic_slice(spread, slice_starts, block)
    irs.set_result_sharding(piece, local)
    mask = masks[0]
    for m in masks[1:]:
        mask = b.binary("and", mask, m)
    out = b.select(mask, piece, x)
    irs.set_result_sharding(out, local)
    return out


def pad_high(b: Builder, x, shape, sharding: TensorSharding):
    """x padded high with zeros to `shape` (x when it has that shape)."""
    if list(shape_of(x)) == list(shape):
        return x
    rank = len(shape)
    zero = b.constant(zeros(tensor((), element_of(x))))
    out = b.pad(x, zero, [0] * rank, [m - n for m, n in zip(shape, shape_of(x))], [0] * rank, shape)
    irs.set_result_sharding(out, sharding)
    return out
