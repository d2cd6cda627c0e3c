"""-sdy-explicit-gather-scatter-batching: turn the implicit batch dimension of a
gather / scatter into an explicit batching dimension.

A gather (scatter) without batching dimensions whose operand dimension 0 is
indexed, through start_index_map (scatter_dims_to_operand_dims), by an index
component that is an iota along dimension 0 of the same size (possibly
reshaped, broadcast, clamped or selected, and possibly one input of a
concatenate along the index vector dimension) and that collapses (inserts)
dimension 0, gets operand and indices batching dimension 0 instead; the
iota component is cut out of the indices.

Shardy applies this with MLIR's greedy rewriter, which also, per function,
first deduplicates constants and hoists them to the start of their
isolated-from-above region, and erases trivially dead ops; so does this pass.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from sdylog.ir.rewrite import (attributes_of, create_op, defining_op, erase_trivially_dead_ops,
                               hoist_and_dedup_constants, move_region_blocks, replace_op)
from sdylog.ir.walk import walk_ops

_UNWRAPPED = ("stablehlo.reshape", "stablehlo.broadcast_in_dim")


def _unwrap(value):
    """Follow reshape / broadcast / clamp (its operand) / select (an iota branch, else
    the true branch) back to the value they come from."""
    while True:
        op = defining_op(value)
        if op is None:
            return value
        if op.name in _UNWRAPPED:
            value = op.operands[0]
        elif op.name == "stablehlo.clamp":
            value = op.operands[1]
        elif op.name == "stablehlo.select":
            on_false = defining_op(op.operands[2])
            value = op.operands[2] if on_false is not None and on_false.name == "stablehlo.iota" else op.operands[1]
        else:
            return value


def _iota_component(indices, index_vector_dim: int, component: int) -> bool:
    value = indices
    concat = defining_op(value)
    if concat is not None and concat.name == "stablehlo.concatenate":
        if _concat_dim(concat) != index_vector_dim or component >= len(concat.operands):
            return False
        value = concat.operands[component]
    iota = defining_op(_unwrap(value))
    return iota is not None and iota.name == "stablehlo.iota" and \
        ir.IntegerAttr(iota.attributes["iota_dimension"]).value == 0


def _concat_dim(op) -> int:
    return ir.IntegerAttr(op.attributes["dimension"]).value


def _i64(value: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _without_component(indices, index_vector_dim: int, component: int, loc, ip):
    """The indices with component `component` of the index vector removed."""
    t = ir.RankedTensorType(indices.type)
    shape, elem = list(t.shape), t.element_type
    total = shape[index_vector_dim]
    concat = defining_op(indices)
    if (concat is not None and concat.name == "stablehlo.concatenate"
            and _concat_dim(concat) == index_vector_dim and len(concat.operands) == total):
        parts = [v for i, v in enumerate(concat.operands) if i != component]
    else:
        parts = []
        for start, end in ((0, component), (component + 1, total)):
            if start >= end:
                continue
            lo, hi = [0] * len(shape), list(shape)
            lo[index_vector_dim], hi[index_vector_dim] = start, end
            part_shape = list(shape)
            part_shape[index_vector_dim] = end - start
            parts.append(create_op("stablehlo.slice", results=[ir.RankedTensorType.get(part_shape, elem)],
                                   operands=[indices],
                                   attributes={"start_indices": ir.DenseI64ArrayAttr.get(lo),
                                               "limit_indices": ir.DenseI64ArrayAttr.get(hi),
                                               "strides": ir.DenseI64ArrayAttr.get([1] * len(shape))},
                                   loc=loc, ip=ip).results[0])
    if len(parts) == 1:
        return parts[0]
    shape[index_vector_dim] -= 1
    return create_op("stablehlo.concatenate", results=[ir.RankedTensorType.get(shape, elem)], operands=parts,
                     attributes={"dimension": _i64(index_vector_dim)}, loc=loc, ip=ip).results[0]


def _batch_component(operand_type, indices_type, index_vector_dim: int, index_map: list[int]):
    """The index vector component that indexes operand dimension 0, if the shapes
    allow an implicit batch dimension 0; else None."""
    o, i = ir.RankedTensorType(operand_type), ir.RankedTensorType(indices_type)
    if o.rank == 0 or i.rank == 0:
        return None
    if index_vector_dim >= i.rank or i.shape[index_vector_dim] <= 1:
        return None
    if i.shape[0] != o.shape[0] or 0 not in index_map:
        return None
    return index_map.index(0)


def _bool(op, name: str) -> bool:
    return name in op.attributes and ir.BoolAttr(op.attributes[name]).value


def _without_batch(op, operand_type, indices, ivd: int, index_map: list, dropped: list):
    """(new indices, index map, dropped dims) once the batch dimension 0 becomes
    explicit: the index component that is an iota over dimension 0 leaves the
    indices (new ones are built before `op`) and the index map, dimension 0 the
    collapsed (inserted) dims. None when it does not apply."""
    component = _batch_component(operand_type, indices.type, ivd, index_map)
    if component is None or not _iota_component(indices, ivd, component) or 0 not in dropped:
        return None
    index_map, dropped = list(index_map), list(dropped)
    index_map.pop(component)
    dropped.remove(0)
    return _without_component(indices, ivd, component, op.location, ir.InsertionPoint(op)), index_map, dropped


def rewrite_gather(op) -> bool:
    dims = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    if list(dims.operand_batching_dims):
        return False
    operand, indices = op.operands
    ivd = dims.index_vector_dim
    found = _without_batch(op, operand.type, indices, ivd, list(dims.start_index_map),
                           list(dims.collapsed_slice_dims))
    if found is None:
        return False
    new_indices, index_map, collapsed = found
    attrs = attributes_of(op)
    attrs["dimension_numbers"] = stablehlo.GatherDimensionNumbers.get(
        list(dims.offset_dims), collapsed, [0], [0], index_map, ivd)
    attrs["indices_are_sorted"] = ir.BoolAttr.get(_bool(op, "indices_are_sorted"))
    new = create_op("stablehlo.gather", results=[op.results[0].type], operands=[operand, new_indices],
                    attributes=attrs, loc=op.location, ip=ir.InsertionPoint(op))
    replace_op(op, new.results)
    return True


def rewrite_scatter(op) -> bool:
    dims = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    if list(dims.input_batching_dims):
        return False
    n = (len(op.operands) - 1) // 2
    inputs, indices, updates = list(op.operands[:n]), op.operands[n], list(op.operands[n + 1:])
    ivd = dims.index_vector_dim
    found = _without_batch(op, inputs[0].type, indices, ivd, list(dims.scattered_dims_to_operand_dims),
                           list(dims.inserted_window_dims))
    if found is None:
        return False
    new_indices, index_map, inserted = found
    attrs = attributes_of(op)
    attrs["scatter_dimension_numbers"] = stablehlo.ScatterDimensionNumbers.get(
        list(dims.update_window_dims), inserted, [0], [0], index_map, ivd)
    attrs["indices_are_sorted"] = ir.BoolAttr.get(_bool(op, "indices_are_sorted"))
    attrs["unique_indices"] = ir.BoolAttr.get(_bool(op, "unique_indices"))
    new = create_op("stablehlo.scatter", results=[r.type for r in op.results],
                    operands=inputs + [new_indices] + updates, attributes=attrs, regions=1,
                    loc=op.location, ip=ir.InsertionPoint(op))
    move_region_blocks(op.regions[0], new.regions[0])
    replace_op(op, new.results)
    return True


def run(module: ir.Module, options: dict, ctx) -> None:
    with module.context, module.operation.location:
        for func in [op.operation for op in module.body.operations if op.operation.name == "func.func"]:
            hoist_and_dedup_constants(func)
            erase_trivially_dead_ops(func)
            changed = True
            while changed:
                changed = False
                for op in [op for op in walk_ops(func) if op.name in ("stablehlo.gather", "stablehlo.scatter")]:
                    rewrite = rewrite_gather if op.name == "stablehlo.gather" else rewrite_scatter
                    changed |= rewrite(op)
                erase_trivially_dead_ops(func)
