"""-sdy-per-instruction-partitioning: partition chosen ops one at a time and
keep the rest of the program global (Shardy's per_instruction_partitioning.cc,
for debugging and bisecting a partitioner).

Every op of a function body's top level that has a sharded operand or
result (sdy's collectives, edges, manual computations, sharding constraints
and groups, barriers and `Sharding` custom calls aside) gets a sequence
number, 0, 1, ... in program order; `filter` chooses among them:
comma-separated op-name substrings (`dot,pad`) and `selectLow=N` /
`selectHigh=N` bounds on the number, all of them when empty.

Each chosen op is copied into a module of its own as the body of a
function whose arguments and results carry the op's shardings (a missing
one fully replicated; results without unreduced axes), padded to divisible
shapes. That module goes through the partitioner's passes
(pipelines.per_instruction_steps); the per-device body it leaves replaces
the op as an `sdy.manual_computation` over every axis the shardings name,
with `stablehlo.pad` before it and `stablehlo.slice` after it where a shape
was padded.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.diagnostics import error_at
from sdylog.ir.rewrite import as_operation, create_op, move_region_blocks, replace_terminator
from sdylog.ir.shardings import (COLLECTIVE_OPS, Meshes, get_or_create_sharding, get_sharding,
                                 set_func_arg_attr, set_func_result_sharding, set_sharding)
from sdylog.ir.walk import func_ops
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding, sharding_per_value_attr
from sdylog.partition.build import Builder, dense_i64_array, tensor
from sdylog.passes import PassContext
from sdylog.passes.census import shared_census
from sdylog.passes.manual_axes_cleanup import common_mesh_ref
from sdylog.passes.pipelines import PartitionerOptions, per_instruction_steps, registered_steps, run_steps

# Ops that are never partitioned on their own (Shardy: collectives, edges,
# manual computations, meshes, barriers, sharding constraints and groups).
_SKIPPED = COLLECTIVE_OPS | {"sdy.data_flow_edge", "sdy.manual_computation", "sdy.mesh", "sdy.propagation_barrier",
                             "sdy.return", "sdy.sharding_constraint", "sdy.sharding_group", "func.return"}
_SHARDING_CUSTOM_CALLS = ("Sharding", "mhlo.sharding")


@dataclass(frozen=True)
class Filter:
    """Which candidate ops to partition: by sequence number and op name."""
    select_low: int = -1
    select_high: int = -1
    op_names: tuple[str, ...] = ()
    select_all: bool = False

    @staticmethod
    def parse(text: str) -> Filter:
        text = text.strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1].strip()
        if not text:
            return Filter(select_all=True)
        low, high, names = -1, -1, []
        for token in (t.strip() for t in text.split(",")):
            if not token:
                continue
            key, sep, value = token.partition("=")
            if sep and key in ("selectLow", "selectHigh"):
                if value.strip().lstrip("-").isdigit():   # (Shardy ignores a bound it cannot read)
                    if key == "selectLow":
                        low = int(value)
                    else:
                        high = int(value)
            else:
                names.append(token)
        return Filter(low, high, tuple(names))

    def matches(self, name: str, seq: int) -> bool:
        if self.select_all:
            return True
        if 0 <= self.select_low and seq < self.select_low:
            return False
        if 0 <= self.select_high and seq > self.select_high:
            return False
        return not self.op_names or any(n in name for n in self.op_names)


def run(module: ir.Module, options: dict, ctx):
    chosen = candidates(module, Filter.parse(options["filter"]))
    if not chosen:
        return None
    sub = PartitionerOptions(options["enable-halo-exchange"], options["replica-count"], options["partition-count"])
    steps = registered_steps(per_instruction_steps(sub), ctx)
    meshes = Meshes(module)
    for op in chosen:
        with op.location:
            _partition(module, op, meshes, steps, ctx)
    return None


def candidates(module: ir.Module, flt: Filter) -> list[ir.Operation]:
    """The ops `flt` chooses, in program order."""
    chosen, seq = [], 0
    for func in func_ops(module):
        for block in func.regions[0].blocks:
            for op in block.operations:
                op = as_operation(op)
                if op.name in _SKIPPED or _is_sharding_custom_call(op) or not _has_sharded_value(op):
                    continue
                if flt.matches(op.name, seq):
                    chosen.append(op)
                seq += 1
    return chosen


def _is_sharding_custom_call(op) -> bool:
    return (op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value in _SHARDING_CUSTOM_CALLS)


def _has_sharded_value(op) -> bool:
    for v in (*op.results, *op.operands):
        s = get_sharding(v)
        if s is not None and not TensorSharding.from_attr(s).is_fully_replicated:
            return True
    return False


@dataclass
class _Shardings:
    """An op's operand and result shardings on one mesh, and the axes they name."""
    ins: list
    outs: list
    manual_axes: list[str]


def _op_shardings(op, mesh_ref) -> _Shardings:
    def of(values, drop_unreduced: bool):
        out = []
        for v in values:
            s = TensorSharding.from_attr(get_or_create_sharding(v, mesh_ref, closed_if_missing=True))
            if drop_unreduced or not isinstance(s.mesh, str):   # (results: partial sums are not kept)
                s = TensorSharding(_mesh_of_ref(mesh_ref), s.dims, s.replicated, () if drop_unreduced else s.unreduced)
            out.append(s)
        return out
    ins, outs = of(op.operands, False), of(op.results, True)
    axes: list[str] = []
    for s in (*ins, *outs):
        for a in s.used_axes():
            if a.name not in axes:
                axes.append(a.name)
    return _Shardings(ins, outs, axes)


def _mesh_of_ref(mesh_ref):
    return mesh_ref.value if isinstance(mesh_ref, ir.FlatSymbolRefAttr) else Mesh.from_attr(mesh_ref)


def _mesh_symbol(module: ir.Module, mesh_ref, meshes: Meshes):
    """Shardy's getOrCreateMeshSymbol: the symbol of an inlined mesh (the
    module's first mesh with axes when it is that mesh, else any equal
    one, else a new `@mesh`)."""
    if isinstance(mesh_ref, ir.FlatSymbolRefAttr):
        return mesh_ref
    for name, attr in meshes.attrs.items():
        if attr == mesh_ref:
            return ir.FlatSymbolRefAttr.get(name)
    op = create_op("sdy.mesh", attributes={"sym_name": ir.StringAttr.get("mesh"), "mesh": mesh_ref},
                   ip=ir.InsertionPoint.at_block_begin(module.body))
    meshes.attrs["mesh"] = mesh_ref
    return ir.FlatSymbolRefAttr.get(ir.StringAttr(op.attributes["sym_name"]).value)


def _divisible_type(t, sharding: TensorSharding, meshes: Meshes):
    """`t` with every dimension its sharding does not divide rounded up to
    the next multiple of its number of shards."""
    if not isinstance(t, ir.RankedTensorType) or sharding.is_fully_replicated:
        return t
    mesh = meshes.named(sharding.mesh) if isinstance(sharding.mesh, str) else sharding.mesh
    sizes = mesh.axis_sizes
    shape = list(ir.RankedTensorType(t).shape)
    for d, dim in enumerate(sharding.dims):
        n = 1
        for a in dim.axes:
            n *= a.size(sizes[a.name])
        if n > 1 and shape[d] % n:
            shape[d] += n - shape[d] % n
    return tensor(shape, ir.RankedTensorType(t).element_type)


def _padded_types(op, sh: _Shardings, meshes: Meshes) -> tuple[list, list]:
    """Operand and result types padded to divisible shapes (a reshard's
    operand and result: one type, the larger of both paddings)."""
    ins = [_divisible_type(v.type, s, meshes) for v, s in zip(op.operands, sh.ins)]
    outs = [_divisible_type(v.type, s, meshes) for v, s in zip(op.results, sh.outs)]
    if op.name == "sdy.reshard" and (ins[0] != op.operands[0].type or outs[0] != op.results[0].type):
        shape = [max(a, b) for a, b in zip(ir.RankedTensorType(ins[0]).shape, ir.RankedTensorType(outs[0]).shape)]
        both = tensor(shape, ir.RankedTensorType(ins[0]).element_type)
        ins, outs = [both], [both]
    return ins, outs


def _partition(module: ir.Module, op, meshes: Meshes, steps, ctx) -> None:
    refs = [get_sharding(v) for v in (*op.operands, *op.results)]
    mesh_ref = common_mesh_ref(refs, meshes)
    if mesh_ref is None:
        raise error_at(op, f"'{op.name}' has operands or results on different meshes: it cannot be "
                       "partitioned on its own", ctx.filename)
    mesh_ref = _mesh_symbol(module, mesh_ref, meshes)
    sh = _op_shardings(op, mesh_ref)
    in_types, out_types = _padded_types(op, sh, meshes)
    b = Builder(ir.InsertionPoint(op), op.location)
    operands = [_pad_to(b, v, t, s) for v, t, s in zip(op.operands, in_types, sh.ins)]

    alone, local = _partitioned_alone(module, op, sh, in_types, out_types, steps, ctx)
    manual = create_op("sdy.manual_computation", results=out_types, operands=operands, regions=1,
                       attributes={"in_shardings": _per_value(sh.ins), "out_shardings": _per_value(sh.outs),
                                   "manual_axes": sdy.ManualAxesAttr.get([ir.StringAttr.get(a) for a in sh.manual_axes])},
                       loc=op.location, ip=ir.InsertionPoint(op))
    move_region_blocks(local.regions[0], manual.regions[0])
    del alone   # (its module owned `local` until the body moved)
    for block in manual.regions[0].blocks:
        replace_terminator(block, "sdy.return")
    for old, new, s in zip(op.results, manual.results, sh.outs):
        if new.type != old.type:
            new = _slice_to(Builder(ir.InsertionPoint(op), op.location), new, old.type, s)
        old.replace_all_uses_with(new)
    op.erase()


def _per_value(shardings) -> ir.Attribute:
    return sharding_per_value_attr(shardings)


def _pad_to(b: Builder, value, t, sharding: TensorSharding):
    """`value` padded high with zeros to type `t`, carrying `sharding`."""
    if value.type == t:
        return value
    shape, want = ir.RankedTensorType(value.type).shape, ir.RankedTensorType(t).shape
    padded = b.one("stablehlo.pad", [value, b.scalar(0, ir.RankedTensorType(t).element_type)], t,
                   {"edge_padding_low": dense_i64_array([0] * len(shape)),
                    "edge_padding_high": dense_i64_array([w - s for s, w in zip(shape, want)]),
                    "interior_padding": dense_i64_array([0] * len(shape))})
    set_sharding(padded, sharding.to_attr())
    return padded


def _slice_to(b: Builder, value, t, sharding: TensorSharding):
    out = b.leading_slice(value, ir.RankedTensorType(t).shape)
    set_sharding(out, sharding.to_attr())
    return out


def _partitioned_alone(module: ir.Module, op, sh: _Shardings, in_types, out_types, steps, ctx):
    """The per-device function of `op` alone (Shardy's outlineInstruction
    and runPartitionerPipeline): a module with the meshes and one function
    holding a copy of the op, through the partitioner's passes. Returns the
    module and its function (the module owns the function)."""
    alone = ir.Module.create(op.location)
    top = ir.InsertionPoint(alone.body)
    for m in module.body.operations:
        if m.operation.name == "sdy.mesh":
            m.operation.clone(top)
    ftype = ir.FunctionType.get(list(in_types), list(out_types))
    func = create_op("func.func", attributes={"sym_name": ir.StringAttr.get("outlined_op"),
                                              "function_type": ir.TypeAttr.get(ftype),
                                              "sym_visibility": ir.StringAttr.get("private")},
                     regions=1, loc=op.location, ip=top)
    for i, s in enumerate(sh.ins):
        set_func_arg_attr(func, i, "sdy.sharding", s.to_attr())
    for i, s in enumerate(sh.outs):
        set_func_result_sharding(func, i, s.to_attr())
    block = func.regions[0].blocks.append(*in_types)
    copy = op.clone(ir.InsertionPoint(block))
    for i, arg in enumerate(block.arguments):
        copy.operands[i] = arg
    _pad_attributes(copy, op, out_types)
    create_op("func.return", operands=list(copy.results), loc=op.location, ip=ir.InsertionPoint(block))
    sub = PassContext(filename=ctx.filename)
    with shared_census(sub):
        run_steps(alone, sub, steps)
    for f in func_ops(alone):
        return alone, f
    raise error_at(op, "the partitioner left no function", ctx.filename)


def _pad_attributes(copy, op, out_types) -> None:
    """The copy's result types padded, and a slice's limits or a pad's high
    edge grown by as much (Shardy's outlineInstruction does only these two)."""
    for i, (r, t) in enumerate(zip(copy.results, out_types)):
        if r.type == t:
            continue
        grow = [w - s for s, w in zip(ir.RankedTensorType(r.type).shape, ir.RankedTensorType(t).shape)]
        key = {"stablehlo.slice": "limit_indices", "stablehlo.pad": "edge_padding_high"}.get(copy.name)
        if key is not None:
            old = list(ir.DenseI64ArrayAttr(copy.attributes[key]))
            copy.attributes[key] = dense_i64_array([a + g for a, g in zip(old, grow)])
        r.set_type(t)
