"""Building the StableHLO ops a per-device program needs (generic op creation
through jaxlib's bindings): reshapes, index tables, collectives with their
reduction bodies."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as shlo

_I64 = None


def i64():
    return ir.IntegerType.get_signless(64)


def tensor(shape, element_type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type)


def shape_of(value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def element_of(value):
    return ir.RankedTensorType(value.type).element_type


def zeros(t: ir.RankedTensorType) -> ir.Attribute | None:
    """A splat of zeros of an integer, floating-point or complex tensor type
    (None for another element type)."""
    et = t.element_type
    if isinstance(et, ir.IntegerType):
        return ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(et, 0))
    if isinstance(et, ir.FloatType):
        return ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(et, 0.0))
    if isinstance(et, ir.ComplexType) and _COMPLEX.get(str(et.element_type)):
        # get_splat takes no complex attribute; one element spread over the type is a splat
        return ir.DenseElementsAttr.get(np.zeros(1, _COMPLEX[str(et.element_type)]), type=t)
    return None


_COMPLEX = {"f32": np.complex64, "f64": np.complex128}


def identity_attr(kind: str, et) -> ir.Attribute:
    """The scalar identity of reduction `kind` ("add", "multiply", "maximum",
    "minimum", "and", "or") of element type `et`: what a masked element holds."""
    t = tensor((), et)
    is_int = isinstance(et, ir.IntegerType)
    if kind in ("add", "or"):
        v = 0
    elif kind in ("multiply", "and"):
        v = 1
    else:
        if is_int:
            w = ir.IntegerType(et).width
            unsigned = ir.IntegerType(et).is_unsigned
            if kind == "maximum":
                v = 0 if unsigned else -(1 << (w - 1))
            else:
                v = (1 << w) - 1 if unsigned else (1 << (w - 1)) - 1
        else:   # (infinities: the largest finite value is no identity for an empty segment's -inf)
            v = float("-inf") if kind == "maximum" else float("inf")
    if is_int:
        if ir.IntegerType(et).width == 1:
            return ir.DenseElementsAttr.get(np.array(bool(v)), type=t)
        return ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(et, int(v)))
    return ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(et, float(v)))


def dense_i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def i64_attr(n: int) -> ir.Attribute:
    return ir.IntegerAttr.get(i64(), int(n))


class Builder:
    """Creates ops at an insertion point, all at one location."""

    def __init__(self, ip: ir.InsertionPoint, loc: ir.Location):
        self.ip = ip
        self.loc = loc

    def op(self, name: str, operands, result_types, attrs=None, regions: int = 0) -> ir.Operation:
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attrs or {}, regions=regions, loc=self.loc, ip=self.ip)

    def one(self, name, operands, result_type, attrs=None) -> ir.Value:
        return self.op(name, operands, [result_type], attrs).results[0]

    # constants and ids -------------------------------------------------------------
    def constant(self, attr: ir.Attribute) -> ir.Value:
        return self.one("stablehlo.constant", [], attr.type, {"value": attr})

    def i64_table(self, values) -> ir.Value:
        arr = np.asarray(values, dtype=np.int64)
        return self.constant(ir.DenseElementsAttr.get(arr, type=tensor(arr.shape, i64())))

    def bool_table(self, values) -> ir.Value:
        arr = np.asarray(values, dtype=np.bool_)
        return self.constant(ir.DenseElementsAttr.get(arr, type=tensor(arr.shape, ir.IntegerType.get_signless(1))))

    def scalar(self, value, element_type) -> ir.Value:
        t = tensor((), element_type)
        if isinstance(element_type, ir.IntegerType):
            attr = ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(element_type, int(value)))
        else:
            attr = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(element_type, float(value)))
        return self.constant(attr)

    def device_id(self, use_replica_id: bool) -> ir.Value:
        """The running device's id as tensor<i64> (partition_id, or replica_id)."""
        ui32 = ir.IntegerType.get_unsigned(32)
        raw = self.one("stablehlo.replica_id" if use_replica_id else "stablehlo.partition_id", [],
                       tensor((), ui32))
        return self.convert(raw, i64())

    def table_lookup(self, table, device: ir.Value) -> ir.Value:
        """table[device] for a per-device table of i64 (or i1) values, as a scalar tensor."""
        t = self.i64_table(table)
        piece = self.dynamic_slice(t, [device], [1])
        return self.reshape(piece, ())

    # shape ops --------------------------------------------------------------------
    def reshape(self, x, shape) -> ir.Value:
        return self.one("stablehlo.reshape", [x], tensor(shape, element_of(x)))

    def transpose(self, x, perm) -> ir.Value:
        shape = shape_of(x)
        return self.one("stablehlo.transpose", [x], tensor([shape[p] for p in perm], element_of(x)),
                        {"permutation": dense_i64_array(perm)})

    def broadcast(self, x, shape, dims, element_type=None) -> ir.Value:
        return self.one("stablehlo.broadcast_in_dim", [x], tensor(shape, element_type or element_of(x)),
                        {"broadcast_dimensions": dense_i64_array(dims)})

    def convert(self, x, element_type) -> ir.Value:
        return self.one("stablehlo.convert", [x], tensor(shape_of(x), element_type))

    def dynamic_slice(self, x, starts, sizes) -> ir.Value:
        return self.one("stablehlo.dynamic_slice", [x] + list(starts), tensor(sizes, element_of(x)),
                        {"slice_sizes": dense_i64_array(sizes)})

    def leading_slice(self, x, shape) -> ir.Value:
        """The part of x of `shape` from its first element (what padding added cut off again)."""
        rank = len(shape)
        return self.one("stablehlo.slice", [x], tensor(shape, element_of(x)),
                        {"start_indices": dense_i64_array([0] * rank), "limit_indices": dense_i64_array(shape),
                         "strides": dense_i64_array([1] * rank)})

    def concatenate(self, xs, dim: int) -> ir.Value:
        shape = list(shape_of(xs[0]))
        shape[dim] = sum(shape_of(x)[dim] for x in xs)
        return self.one("stablehlo.concatenate", xs, tensor(shape, element_of(xs[0])), {"dimension": i64_attr(dim)})

    def pad(self, x, value, low, high, interior, result_shape) -> ir.Value:
        return self.one("stablehlo.pad", [x, value], tensor(result_shape, element_of(x)),
                        {"edge_padding_low": dense_i64_array(low), "edge_padding_high": dense_i64_array(high),
                         "interior_padding": dense_i64_array(interior)})

    def iota(self, result_type, dim: int) -> ir.Value:
        return self.one("stablehlo.iota", [], result_type, {"iota_dimension": i64_attr(dim)})

    # element-wise -----------------------------------------------------------------
    def binary(self, name: str, a, b) -> ir.Value:
        return self.one(f"stablehlo.{name}", [a, b], a.type)

    def compare(self, a, b, direction: str) -> ir.Value:
        t = tensor(shape_of(a), ir.IntegerType.get_signless(1))
        return self.one("stablehlo.compare", [a, b], t,
                        {"comparison_direction": shlo.ComparisonDirectionAttr.get(direction)})

    def select(self, pred, a, b) -> ir.Value:
        return self.one("stablehlo.select", [pred, a, b], a.type)

    def clamp(self, lo, x, hi) -> ir.Value:
        return self.one("stablehlo.clamp", [lo, x, hi], x.type)

    # regions ----------------------------------------------------------------------
    def reduction_body(self, op: ir.Operation, element_type, kind: str, region: int = 0) -> None:
        """`^bb(%a, %b): return kind(%a, %b)` for a scalar of element_type."""
        t = tensor((), element_type)
        block = op.regions[region].blocks.append(t, t)
        inner = Builder(ir.InsertionPoint(block), self.loc)
        r = inner.one(f"stablehlo.{kind}", [block.arguments[0], block.arguments[1]], t)
        inner.op("stablehlo.return", [r], [])

    def reduce(self, x, init, dims, kind: str) -> ir.Value:
        shape = [n for i, n in enumerate(shape_of(x)) if i not in dims]
        op = self.op("stablehlo.reduce", [x, init], [tensor(shape, element_of(x))],
                     {"dimensions": dense_i64_array(dims)}, regions=1)
        self.reduction_body(op, element_of(x), kind)
        return op.results[0]

    # collectives --------------------------------------------------------------------
    def _collective_attrs(self, groups, channel: int, use_global: bool) -> dict:
        attrs = {"replica_groups": groups, "channel_handle": shlo.ChannelHandle.get(channel, 1)}
        if use_global:
            attrs["use_global_device_ids"] = ir.UnitAttr.get()
        return attrs

    def all_gather(self, x, dim: int, groups, group_size: int, channel: int) -> ir.Value:
        shape = list(shape_of(x))
        shape[dim] *= group_size
        attrs = self._collective_attrs(groups, channel, True)
        attrs["all_gather_dim"] = i64_attr(dim)
        return self.one("stablehlo.all_gather", [x], tensor(shape, element_of(x)), attrs)

    def all_reduce(self, x, groups, channel: int, kind: str = "add", result_type=None) -> ir.Value:
        op = self.op("stablehlo.all_reduce", [x], [result_type or x.type],
                     self._collective_attrs(groups, channel, True), regions=1)
        self.reduction_body(op, element_of(x), kind)
        return op.results[0]

    def reduce_scatter(self, x, dim: int, groups, channel: int, result_type, kind: str = "add") -> ir.Value:
        attrs = self._collective_attrs(groups, channel, True)
        attrs["scatter_dimension"] = i64_attr(dim)
        op = self.op("stablehlo.reduce_scatter", [x], [result_type], attrs, regions=1)
        self.reduction_body(op, element_of(x), kind)
        return op.results[0]

    def all_to_all(self, x, split_dim: int, concat_dim: int, count: int, groups, channel: int) -> ir.Value:
        shape = list(shape_of(x))
        shape[concat_dim] *= count
        shape[split_dim] //= count
        attrs = {"split_dimension": i64_attr(split_dim), "concat_dimension": i64_attr(concat_dim),
                 "split_count": i64_attr(count), "replica_groups": groups,
                 "channel_handle": shlo.ChannelHandle.get(channel, 1)}
        return self.one("stablehlo.all_to_all", [x], tensor(shape, element_of(x)), attrs)

    def collective_permute(self, x, pairs, channel: int) -> ir.Value:
        arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        attrs = {"source_target_pairs": ir.DenseElementsAttr.get(arr, type=tensor(arr.shape, i64())),
                 "channel_handle": shlo.ChannelHandle.get(channel, 1)}
        return self.one("stablehlo.collective_permute", [x], x.type, attrs)


def replica_groups_attr(groups) -> ir.Attribute:
    arr = np.asarray(groups, dtype=np.int64)
    return ir.DenseElementsAttr.get(arr, type=tensor(arr.shape, i64()))
