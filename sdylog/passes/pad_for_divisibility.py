"""-sdy-pad-for-divisibility: pad every dimension its sharding does not divide
to the next multiple of its number of shards, so that every device's block
has the same size (convert-global-to-local needs that).

rules/partition/padding.dl decides every size, which operands are padded
before an op, which results are cut back after it, which padding must be
zeros (masks) and the new edge padding of pad ops. This pass hands the
rules what they need to know of the ops (their type inference, which
dimensions they sum over, window and edge attributes) and writes the answers
into the IR: new result types, and the pads, masks and slices they name.
Building those ops is mechanical rewriting, so it is Python's.

Shardy rewrites with MLIR's dialect conversion: an operand of an op the
conversion leaves alone (a `func.return`, a `sdy.reshard`) that got padded
reaches it through an `unrealized_conversion_cast`; here it is sliced back
to its own size instead, which keeps the program valid.

Beyond Shardy (whose pass leaves both and fails, checked with jaxlib's): a
constant that grows becomes the same splat of the padded type, or (any
other value) is padded with zeros, replicated, and all_sliced to its
sharding; a while loop's carries (its regions' arguments) take the padded
size of its results, and its initial values and the values its body
returns are padded (or cut) to it.

Beyond Shardy: a value whose padded size must change on a dimension its
sharding splits (an all_gather or all_to_all to fewer shards than its
operand was padded for, cut back; the operand of an all_slice,
reduce_scatter or all_to_all padded on a dimension it is sharded on, as the
halo path leaves a slice whose result takes more axes) is laid out again:
gathered on that dimension, cut to its size, padded and sliced again.
Shardy's patterns slice or pad such a value in place (jaxlib's Shardy
writes that pad for such an all_slice), which moves the shard boundaries
over the data: each device's block grows or shrinks, and its data belongs
elsewhere (convert-global-to-local refuses such a pad). An element-wise chlo op
(chlo.square in jnp.var) takes padded operands as a stablehlo op does
(Shardy's pattern leaves it, which cuts its operand back to a size its
sharding does not divide).

Beyond Shardy (whose pass writes an op that does not verify): x[0] of rows
sharded leaves an axis on the slice's dimension of size 1, padded; the
reshape dropping it (or the broadcast_in_dim expanding it) takes the operand
gathered on that dimension and cut back to its one row. A dynamic_slice
taking a whole padded dimension grows its size with it (as a gather's
slice_sizes do).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as shlo

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.collectives import axis_lists_attr, create_collective
from sdylog.ir.op_properties import ELEMENTWISE_OPS
from sdylog.ir.rewrite import splat_of_type
from sdylog.model.mesh import meshes_of_module
from sdylog.oprules.common import conv_window
from sdylog.partition import ir_shardings as irs
from sdylog.partition.build import Builder, dense_i64_array, element_of, identity_attr, shape_of, tensor, zeros
from sdylog.partition.facts import add_slice_and_pad_attributes, explicit_facts, run_rules
from sdylog.partition.shards import divides_on
from sdylog.passes.census import PRESERVED, census
from sdylog.reshard.driver import no_common_mesh

# Ops whose results keep their operands' shapes, result i <- operand i
# (only those Shardy's type inference covers: ops implementing InferTypeOpInterface).
_BY_INDEX = {"stablehlo.optimization_barrier", "stablehlo.while", "stablehlo.sort", "stablehlo.scatter"}
_SAME_SHAPE = {"stablehlo.reverse", "stablehlo.reduce_precision", "sdy.all_reduce", "sdy.all_gather",
               "sdy.collective_permute", "sdy.all_slice", "sdy.reduce_scatter", "sdy.all_to_all"}


def run(module: ir.Module, options: dict, ctx):
    if not _some_dimension_indivisible(module, ctx):
        return PRESERVED
    # An op insert-explicit-reshards left on meshes of different axes has no
    # per-device program (convert-global-to-local refuses it): padding
    # around it would pad its operands and results apart and leave an
    # invalid global program, so the refusal comes here, before any padding.
    error = no_common_mesh(module, ctx)
    if error is not None:
        raise error
    facts = explicit_facts(module)
    with module.context:
        add_slice_and_pad_attributes(facts)
        extra = _op_facts(facts)
    scatters = {op_id for op_id, op in enumerate(facts.ops) if op.name == "stablehlo.scatter"}
    if scatters:   # (how each combines its updates: the masks' identities)
        kinds = run_rules("reduction_kind", facts)
        extra["scatter_combines"] = [(o, i, kind) for o, i, kind in kinds.select("reducer_combines", "o", "i", "kind")
                                     if o in scatters]
    answers = run_rules("padding", facts, extra)
    rows = {name: answers.read(name) for name in (
        "nondivisible_func_io", "conv_short", "result_size", "cut_locally", "pads_operand_locally",
        "relayout_result", "relayout_operand", "mask_operand", "mask_dim", "pad_high", "masks_pad_operand",
        "restores_operand", "fits_operand", "value_dim", "topk_padded_last", "scatter_update_kind",
        "scatter_padding_unmasked", "restores_unit_dim")}
    for func, what, index in sorted(rows["nondivisible_func_io"]):
        e = error_at(facts.funcs[func], f"'func.func' op {what} #{index} has a non-divisible sharding. "
                     "Shardy expects function IO to be divisible.", ctx.filename)
        # (as MLIR's conversion reports the function it could not convert)
        e.message += f"\n{e.location}: error: failed to legalize operation 'func.func'"
        raise e
    for op_id, dim in rows["conv_short"]:
        raise error_at(facts.ops[op_id], f"the convolution's padded operands give fewer windows on dimension {dim} "
                       "than its result's padded size: its window sharding must be resolved first "
                       "(-sdy-resolve-permutation-factors)", ctx.filename)
    for (op_id,) in sorted(rows["topk_padded_last"]):
        raise error_at(facts.ops[op_id], "sdylog cannot pad the operand of this top_k on its last dimension (its "
                       "sharding does not divide it): the padding would be sorted into the data", ctx.filename)
    for op_id, operand, dim in sorted(rows["scatter_padding_unmasked"]):
        raise error_at(facts.ops[op_id], f"sdylog cannot pad the updates (operand #{operand}) of this scatter on "
                       f"dimension {dim} (its sharding does not divide it): its update computation has no identity "
                       "to mask the padding with, which would land at arbitrary indices", ctx.filename)
    plan = _Plan(facts, rows, ctx.filename)
    if not plan.touched:
        return PRESERVED
    with module.context, ir.Location.unknown():
        for op_id in sorted(plan.touched):
            _rewrite(facts.ops[op_id], op_id, plan)
    return None


def _some_dimension_indivisible(module: ir.Module, ctx) -> bool:
    """Whether some value's sharding does not divide one of its dimensions
    (or cannot be read): all that padding.dl decides starts from such a
    value (a needed_size above its size), so without one the pass has
    nothing to do. One look per distinct sharding attribute and result
    types, from the census, instead of the facts of every op and an
    evaluation."""
    reader = irs.CachedShardingReader()
    meshes = meshes_of_module(module)

    def divisible(sharding, t) -> bool:
        if sharding is None or not isinstance(t, ir.RankedTensorType):
            return True
        return divides_on(t.shape, sharding, meshes)

    verdicts: dict = {}
    for op in census(module, ctx).all_ops():
        name = op.name
        if name in _ARGUMENT_OWNERS and not _arguments_divisible(op, name, reader, divisible):
            return True
        attr, one = irs.result_sharding_attr(name, op.attributes)
        if attr is None:
            continue
        types = tuple(op.results.types)
        key = (attr, types)
        ok = verdicts.get(key)
        if ok is None:
            ok = verdicts[key] = all(map(divisible, reader.result_shardings(attr, one), types))
        if not ok:
            return True
    return False


_ARGUMENT_OWNERS = {"func.func", "sdy.manual_computation", "sdy.named_computation"}


def _arguments_divisible(op, name: str, reader, divisible) -> bool:
    """The op's block arguments (a function's: and its results) are divisible."""
    if not op.regions[0].blocks:
        return True
    if name == "func.func":
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        return (all(divisible(reader.func_arg_sharding(op, i), t) for i, t in enumerate(ftype.inputs))
                and all(divisible(reader.func_result_sharding(op, i), t) for i, t in enumerate(ftype.results)))
    return all(divisible(reader.block_arg_sharding(a), a.type) for a in op.regions[0].blocks[0].arguments)


class _Plan:
    """The rules' answers by op and value id."""

    def __init__(self, facts, rows, filename=None):
        self.facts = facts
        self.filename = filename
        sizes = {(v, d): n for v, d, n in rows["value_dim"]}
        self.shapes = defaultdict(list)        # value id -> its shape before the pass
        for (v, d), n in sorted(sizes.items()):
            self.shapes[v].append(n)
        self.operand_ids = {(o, i): v for o, i, v in facts.rows("op_operand")}
        self.result_dims = defaultdict(dict)   # value id -> {dim: size} where its op's result grows
        for v, d, z in rows["result_size"]:
            if sizes[(v, d)] != z:
                self.result_dims[v][d] = z
        self.cuts = defaultdict(dict)          # value id -> {dim: size after the cut}
        for v, d, z in rows["cut_locally"]:
            self.cuts[v][d] = z
        self.result_relayouts = defaultdict(dict)   # value id -> {dim: size}
        for v, d, z in rows["relayout_result"]:
            self.result_relayouts[v][d] = z
        self.operand_pads = defaultdict(dict)  # op id -> {dim: high}
        for o, d, h in rows["pads_operand_locally"]:
            self.operand_pads[o][d] = h
        self.operand_relayouts = defaultdict(dict)  # op id -> {dim: size}
        for o, d, z in rows["relayout_operand"]:
            self.operand_relayouts[o][d] = z
        self.zero_constants = {(o, i) for o, i in rows["mask_operand"]}
        self.scatter_kinds = {(o, i): kind for o, i, kind in rows["scatter_update_kind"]}
        self.masks = defaultdict(list)         # (op id, operand) -> dims
        for o, i, d in rows["mask_dim"]:
            self.masks[(o, i)].append(d)
        self.pad_highs = defaultdict(dict)
        for o, d, h in rows["pad_high"]:
            self.pad_highs[o][d] = h
        self.masked_pad_operands = {o for (o,) in rows["masks_pad_operand"]}
        self.restored = defaultdict(list)
        for o, i in rows["restores_operand"]:
            self.restored[o].append(i)
        self.unit_dims = defaultdict(list)     # (op id, operand) -> dims gathered and cut to 1
        for o, i, d in rows["restores_unit_dim"]:
            self.unit_dims[(o, i)].append(d)
        self.fitted = defaultdict(dict)        # (op id, operand) -> {dim: size}
        for o, i, d, z in rows["fits_operand"]:
            self.fitted[(o, i)][d] = z
        results = defaultdict(list)
        for o, _, v in facts.rows("op_result"):
            results[o].append(v)
        self.touched = (set(self.operand_pads) | set(self.operand_relayouts) | {o for o, _ in self.zero_constants}
                        | set(self.restored) | {o for o, _ in self.fitted} | {o for o, _ in self.unit_dims})
        for o, vs in results.items():
            if any(v in self.result_dims or v in self.cuts or v in self.result_relayouts for v in vs):
                self.touched.add(o)
        self.touched |= {o for o in self.pad_highs if self.pad_highs[o] and self._pad_changed(o)}

    def _pad_changed(self, op_id) -> bool:
        op = self.facts.ops[op_id]
        high = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_high"]))
        return any(high[d] != h for d, h in self.pad_highs[op_id].items())

    def operand_shape(self, op_id: int, index: int) -> list[int]:
        """The shape operand `index` of the op had before the pass."""
        return self.shapes[self.operand_ids[(op_id, index)]]

    def result_type(self, value):
        """The type the rules give an op result."""
        vid = self.facts.value_ids[value]
        grown = self.result_dims.get(vid)
        if not grown:
            return value.type
        t = ir.RankedTensorType(value.type)
        shape = [grown.get(d, n) for d, n in enumerate(t.shape)]
        return ir.RankedTensorType.get(shape, t.element_type, t.encoding)


def _rewrite(op, op_id: int, plan: _Plan) -> None:
    name = op.name
    b = Builder(ir.InsertionPoint(op), op.location)
    for i in plan.restored.get(op_id, ()):
        op.operands[i] = _slice_to(b, op.operands[i], plan.operand_shape(op_id, i), None)
    for i in range(len(op.operands)):
        if (op_id, i) in plan.fitted:
            op.operands[i] = _fit(b, op.operands[i], plan.fitted[(op_id, i)], op, plan)
    for i in range(len(op.operands)):
        if (op_id, i) in plan.unit_dims:
            op.operands[i] = _gather_unit_dims(b, op.operands[i], sorted(plan.unit_dims[(op_id, i)]))
    if op_id in plan.operand_relayouts:
        op.operands[0], _ = _relayout(b, op.operands[0], plan.operand_shape(op_id, 0), plan.operand_relayouts[op_id],
                                     plan.filename)
    if op_id in plan.operand_pads:
        x = op.operands[0]
        high = [plan.operand_pads[op_id].get(d, 0) for d in range(len(shape_of(x)))]
        zero = b.constant(zeros(tensor((), element_of(x))))
        padded = b.pad(x, zero, [0] * len(high), high, [0] * len(high),
                       [n + h for n, h in zip(shape_of(x), high)])
        _copy_sharding(x, padded)
        op.operands[0] = padded
    for i in range(len(op.operands)):
        if (op_id, i) in plan.zero_constants:
            x = op.operands[i]
            dims = plan.masks.get((op_id, i))
            if dims:
                fill = _mask_fill(b, op, i, plan.scatter_kinds.get((op_id, i)))
                op.operands[i] = _mask(b, x, plan.operand_shape(op_id, i), fill, sorted(dims))
    if name == "stablehlo.pad":
        _rewrite_pad(op, op_id, b, plan)
    elif name == "stablehlo.slice":
        _rewrite_slice(op, plan)
    elif name in ("stablehlo.gather", "stablehlo.dynamic_slice"):
        _grow_whole_slices(op, op_id, plan)
    elif name in _CONSTANTS:
        _pad_constant(op, plan)
        return
    elif name in ("stablehlo.rng_bit_generator", "stablehlo.rng"):
        _pad_generated_bits(op, plan)
        return
    for r in op.results:
        r.set_type(plan.result_type(r))
    if name == "stablehlo.while":   # (its carries: the types of its results)
        for region in op.regions:
            for a, r in zip(region.blocks[0].arguments, op.results):
                a.set_type(r.type)
    after = Builder(ir.InsertionPoint.after(op), op.location)
    for r in op.results:
        vid = plan.facts.value_ids[r]
        cut, relayout = plan.cuts.get(vid), plan.result_relayouts.get(vid)
        out, first = r, None   # (the value r's users read, the first op reading r)
        if cut:
            shape = [cut.get(d, n) for d, n in enumerate(shape_of(r))]
            out = _slice_to(after, r, shape, irs.sharding_of(r))
            first = out.owner
        if relayout:
            out, gather = _relayout(after, out, plan.shapes[vid], relayout, plan.filename)
            if first is None:
                first = gather
        if first is not None:
            r.replace_all_uses_except(out, first.operation)


def _mask_fill(b: Builder, op, i: int, scatter_kind: str | None):
    """The scalar that masks operand i's padding: a reduce's init value for
    that input (its identity), a scatter's combiner's identity, zero for a
    dot_general or convolution."""
    if op.name == "stablehlo.reduce":
        return op.operands[len(op.operands) // 2 + i]
    if op.name == "stablehlo.scatter":
        return b.constant(identity_attr(scatter_kind, element_of(op.operands[i])))
    return b.constant(zeros(tensor((), element_of(op.operands[i]))))


def _rewrite_pad(op, op_id: int, b: Builder, plan: _Plan) -> None:
    x = op.operands[0]
    if op_id in plan.masked_pad_operands:
        original = plan.operand_shape(op_id, 0)
        op.operands[0] = _mask(b, x, original, op.operands[1],
                               [d for d, (n, z) in enumerate(zip(original, shape_of(x))) if n != z])
    highs = plan.pad_highs.get(op_id, {})
    old = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_high"]))
    op.attributes["edge_padding_high"] = dense_i64_array([highs.get(d, h) for d, h in enumerate(old)])


def _rewrite_slice(op, plan: _Plan) -> None:
    r = op.results[0]
    new = plan.result_type(r)
    if new == r.type:
        return
    starts = list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))
    limits = list(ir.DenseI64ArrayAttr(op.attributes["limit_indices"]))
    strides = list(ir.DenseI64ArrayAttr(op.attributes["strides"]))
    old = ir.RankedTensorType(r.type).shape
    # (only the grown dimensions move their limit, to the last element read:
    # a strided dimension keeps its stride)
    limits = [lim if n == z else s + (n - 1) * k + 1
              for s, lim, k, z, n in zip(starts, limits, strides, old, ir.RankedTensorType(new).shape)]
    sizes = shape_of(op.operands[0])
    for d, (lim, size) in enumerate(zip(limits, sizes)):
        if lim > size:
            raise error_at(op, f"sdylog cannot pad this slice for divisibility: its result padded to "
                           f"{ir.RankedTensorType(new).shape[d]} on dimension {d} would read up to index {lim - 1} "
                           f"of an operand of size {size} there", plan.filename)
    op.attributes["limit_indices"] = dense_i64_array(limits)


def _grow_whole_slices(op, op_id: int, plan: _Plan) -> None:
    """A gather's or dynamic_slice's slice of a whole operand dimension that
    grew takes the whole padded dimension (its result dimension follows it:
    _gather_shape_follows, _dynamic_slice_shape_follows)."""
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    original, now = plan.operand_shape(op_id, 0), shape_of(op.operands[0])
    grown = [z if s == n else s for s, n, z in zip(sizes, original, now)]
    if grown != sizes:
        op.attributes["slice_sizes"] = dense_i64_array(grown)


def _gather_unit_dims(b: Builder, x, dims: list[int]):
    """x (padded on `dims`, of size 1 before the pass) gathered on those of
    `dims` its sharding splits and cut back to size 1 there: its one row,
    which the first shard holds, on every device."""
    sharding = irs.sharding_of(x)
    if sharding is not None and any(sharding.dims[d].axes for d in dims):
        gather, sharding, _ = _gather_dims(b, x, sharding, dims)
        x = gather.result
    shape = [1 if d in dims else n for d, n in enumerate(shape_of(x))]
    return _slice_to(b, x, shape, sharding)


def _gather_dims(b: Builder, x, sharding, dims):
    """An all_gather of x (sharded by `sharding`) on `dims`; returns the op,
    the gathered sharding and the axes per dimension it gathered."""
    gathered = sharding
    for d in dims:
        gathered = gathered.with_dim(d, replace(sharding.dims[d], axes=()))
    axes = [list(sharding.dims[d].axes) if d in dims else [] for d in range(len(sharding.dims))]
    gather = create_collective("sdy.all_gather", x, gathered.to_attr(), axis_lists_attr(axes), loc=b.loc, ip=b.ip)
    return gather, gathered, axes


def _fit(b: Builder, x, sizes: dict, op, plan: _Plan):
    """x padded high with zeros, or cut, to `sizes` ({dim: size})."""
    shape = list(shape_of(x))
    if any(z < n for d, n in enumerate(shape) for z in [sizes.get(d, n)]):
        shape = [min(n, sizes.get(d, n)) for d, n in enumerate(shape)]
        x = _slice_to(b, x, shape, irs.sharding_of(x))
    high = [max(0, sizes.get(d, n) - n) for d, n in enumerate(shape)]
    if not any(high):
        return x
    zero = zeros(tensor((), element_of(x)))
    if zero is None:
        raise error_at(op, f"sdylog cannot pad a value of element type {element_of(x)} here for divisibility "
                       "(-sdy-pad-for-divisibility pads with zeros)", plan.filename)
    rank = len(shape)
    padded = b.pad(x, b.constant(zero), [0] * rank, high, [0] * rank, [n + h for n, h in zip(shape, high)])
    _copy_sharding(x, padded)
    return padded


_CONSTANTS = {"sdy.constant", "stablehlo.constant"}


def _pad_constant(op, plan: _Plan) -> None:
    """A constant that grows: a splat is the same splat of the padded type;
    another value is padded with zeros, replicated, and sliced to its
    sharding by an all_slice (convert-global-to-local makes each device's
    slice of a padded value that divides)."""
    r = op.results[0]
    new = plan.result_type(r)
    if new == r.type:
        return
    value = ir.DenseElementsAttr(op.attributes["value"])
    if value.is_splat:
        op.attributes["value"] = splat_of_type(value, new)
        r.set_type(new)
        return
    zero = zeros(tensor((), element_of(r)))
    if zero is None:
        raise error_at(op, f"sdylog cannot pad this constant of element type {element_of(r)} for its "
                       "non-divisible sharding (-sdy-pad-for-divisibility pads with zeros)", plan.filename)
    sharding = irs.sharding_of(r)
    del op.attributes["sdy.sharding"]   # (replicated: the whole value, padded on every device)
    after = Builder(ir.InsertionPoint.after(op), op.location)
    shape, grown = shape_of(r), ir.RankedTensorType(new).shape
    rank = len(shape)
    padded = after.pad(r, after.constant(zero), [0] * rank, [z - n for n, z in zip(shape, grown)], [0] * rank,
                       list(grown))
    sliced = create_collective("sdy.all_slice", padded, sharding.to_attr(),
                               axis_lists_attr([list(d.axes) for d in sharding.dims]), loc=op.location,
                               ip=ir.InsertionPoint.after(padded.owner)).result
    r.replace_all_uses_except(sliced, padded.owner.operation)


def _pad_generated_bits(op, plan: _Plan) -> None:
    """rng_bit_generator bits (or stablehlo.rng numbers) that grow: generated
    at their own shape (bits of a bigger shape are other bits: the stream
    runs in row-major order), then, as a constant, padded with zeros,
    replicated and sliced to their sharding by an all_slice. The state stays
    as it is (replicated); rng's shape operand keeps the unpadded shape."""
    bits = op.results[-1]
    if plan.result_type(bits) == bits.type:
        return
    sharding = irs.sharding_of(bits)
    del op.attributes["sdy.sharding"]   # (state and bits replicated: the whole value on every device)
    after = Builder(ir.InsertionPoint.after(op), op.location)
    shape, grown = shape_of(bits), ir.RankedTensorType(plan.result_type(bits)).shape
    rank = len(shape)
    padded = after.pad(bits, after.constant(zeros(tensor((), element_of(bits)))), [0] * rank,
                       [z - n for n, z in zip(shape, grown)], [0] * rank, list(grown))
    sliced = create_collective("sdy.all_slice", padded, sharding.to_attr(),
                               axis_lists_attr([list(d.axes) for d in sharding.dims]), loc=op.location,
                               ip=ir.InsertionPoint.after(padded.owner)).result
    bits.replace_all_uses_except(sliced, padded.owner.operation)


def _mask(b: Builder, x, original: list[int], pad_value, dims: list[int]):
    """x where every index along `dims` is inside the original size, else pad_value."""
    shape = shape_of(x)
    sharding = irs.sharding_of(x)
    i32 = ir.IntegerType.get_signless(32)
    index_type = tensor(shape, i32)
    inside = None
    for d in dims:
        iota = b.iota(index_type, d)
        irs.set_result_sharding(iota, sharding)
        limit = b.broadcast(b.scalar(original[d], i32), shape, [])
        irs.set_result_sharding(limit, sharding)
        within = b.compare(iota, limit, "LT")
        irs.set_result_sharding(within, sharding)
        if inside is None:
            inside = within
        else:
            inside = b.binary("and", inside, within)
            irs.set_result_sharding(inside, sharding)
    fill = b.broadcast(pad_value, shape, [])
    irs.set_result_sharding(fill, sharding)
    out = b.select(inside, x, fill)
    irs.set_result_sharding(out, sharding)
    return out


def _relayout(b: Builder, x, original: list[int], sizes: dict, filename):
    """x laid out again to `sizes` ({dim: size}) on dimensions its sharding
    splits: gathered there, cut to its `original` shape, padded with zeros to
    `sizes` and sliced on the same axes (padding or cutting each device's
    block in place would move the shard boundaries over the data).
    Returns the new value and the all_gather, the first op reading x."""
    sharding = irs.sharding_of(x)
    dims = sorted(sizes)
    gather, gathered, axes = _gather_dims(b, x, sharding, dims)
    y = gather.result
    shape = list(shape_of(y))
    if any(shape[d] > original[d] for d in dims):
        shape = [original[d] if d in sizes else n for d, n in enumerate(shape)]
        y = _slice_to(b, y, shape, gathered)
    high = [max(0, sizes[d] - n) if d in sizes else 0 for d, n in enumerate(shape)]
    if any(high):
        zero = zeros(tensor((), element_of(y)))
        if zero is None:
            raise error_at(gather, f"sdylog cannot pad a value of element type {element_of(y)} here for "
                           "divisibility (-sdy-pad-for-divisibility pads with zeros)", filename)
        rank = len(shape)
        y = b.pad(y, b.constant(zero), [0] * rank, high, [0] * rank, [n + h for n, h in zip(shape, high)])
        irs.set_result_sharding(y, gathered)
    sliced = create_collective("sdy.all_slice", y, sharding.to_attr(), axis_lists_attr(axes), loc=b.loc, ip=b.ip)
    return sliced.result, gather


def _slice_to(b: Builder, x, shape: list[int], sharding):
    out = b.leading_slice(x, shape)
    irs.set_result_sharding(out, sharding)
    return out


def _copy_sharding(source, target) -> None:
    try:
        sharding = irs.sharding_of(source)
    except SdylogError:   # a sharding on a mesh the module does not name
        sharding = None
    irs.set_result_sharding(target, sharding)




# ---------------------------------------------------------------- facts about the ops
def _op_facts(facts) -> dict[str, list[tuple]]:
    """What the rules need to know of each op beyond its values and shardings."""
    out = defaultdict(list)
    infers = {}
    for op_id, op in enumerate(facts.ops):
        name = op.name
        if name not in infers:
            infers[name] = _infers_types(op)
        if infers[name]:
            for row in _shape_follows(op, name):
                out["shape_follows"].append((op_id, *row))
        if name in ELEMENTWISE_OPS and name.startswith("chlo."):
            out["chlo_elementwise"].append((op_id,))
        if name == "stablehlo.dot_general":
            dn = shlo.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
            out["reduced_dim"] += [(op_id, 0, d) for d in dn.lhs_contracting_dimensions]
            out["reduced_dim"] += [(op_id, 1, d) for d in dn.rhs_contracting_dimensions]
        elif name == "stablehlo.convolution":
            _conv_facts(op, op_id, out)
        elif name == "stablehlo.reduce":
            dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
            out["reduced_dim"] += [(op_id, i, d) for i in range(len(op.operands) // 2) for d in dims]
        elif name == "stablehlo.scatter":
            n = (len(op.operands) - 1) // 2
            dn = shlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
            window = set(dn.update_window_dims)
            rank = _ranked_rank(op.operands[n + 1]) or 0
            out["reduced_dim"] += [(op_id, n + 1 + j, d) for j in range(n) for d in range(rank) if d not in window]
        elif name == "sdy.all_gather":
            out["gathered_dim"] += [(op_id, d) for d, axes in
                                    enumerate(irs.axis_ref_lists(op.attributes["gathering_axes"])) if axes]
        elif name == "sdy.all_to_all":
            out["all_to_all_source"] += [(op_id, p.src_dim) for p in irs.all_to_all_params(op.attributes["params"])]
        elif name == "stablehlo.reshape":
            dropped, pairs = _reshape_unit_dims(shape_of(op.operands[0]), shape_of(op.results[0]))
            out["unit_dim_unmapped"] += [(op_id, 0, d) for d in dropped]
            out["unit_dim_pair"] += [(op_id, 0, d, r) for d, r in pairs]
        elif name == "stablehlo.broadcast_in_dim":
            dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
            shape, result = shape_of(op.operands[0]), shape_of(op.results[0])
            out["unit_dim_unmapped"] += [(op_id, 0, d) for d, r in enumerate(dims) if shape[d] == 1 and result[r] != 1]
            out["unit_dim_pair"] += [(op_id, 0, d, r) for d, r in enumerate(dims) if shape[d] == 1 and result[r] == 1]
        elif name == "stablehlo.while":
            ret = op.regions[1].blocks[0].operations[len(op.regions[1].blocks[0].operations) - 1]
            out["loop_body_return"].append((facts.op_ids[ret.operation], op_id))
    return out


def _infers_types(op) -> bool:
    try:
        ir.InferTypeOpInterface(op)
        return True
    except ValueError:
        return False


def _ranked_rank(value) -> int | None:
    t = value.type
    return ir.RankedTensorType(t).rank if isinstance(t, ir.RankedTensorType) else None


def _shape_follows(op, name: str):
    """(result, result dim, operand, operand dim) of the op's type inference."""
    results = op.results
    if name in _BY_INDEX:
        for i, r in enumerate(results):
            rank = _ranked_rank(r)
            if rank is not None and i < len(op.operands) and _ranked_rank(op.operands[i]) == rank:
                yield from ((i, d, i, d) for d in range(rank))
        return
    if name == "stablehlo.transpose":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        yield from ((0, d, 0, p) for d, p in enumerate(perm))
        return
    if name == "stablehlo.reduce":
        dims = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        n = len(results)
        for i in range(n):
            rank = _ranked_rank(op.operands[i]) or 0
            kept = [d for d in range(rank) if d not in dims]
            yield from ((i, j, i, d) for j, d in enumerate(kept))
        return
    if name == "stablehlo.concatenate":
        dim = ir.IntegerAttr(op.attributes["dimension"]).value
        rank = _ranked_rank(results[0]) or 0
        yield from ((0, d, 0, d) for d in range(rank) if d != dim)
        return
    if name == "stablehlo.gather":
        yield from _gather_shape_follows(op)
        return
    if name == "stablehlo.dynamic_slice":
        yield from _dynamic_slice_shape_follows(op)
        return
    if name == "chlo.top_k":   # (values and indices: the operand's batch dimensions)
        rank = _ranked_rank(op.operands[0]) or 0
        yield from ((i, d, 0, d) for i in range(len(results)) for d in range(rank - 1))
        return
    if name in _SAME_SHAPE or name in ELEMENTWISE_OPS:
        for i, r in enumerate(results):
            rank = _ranked_rank(r)
            source = next((k for k, v in enumerate(op.operands) if _ranked_rank(v) == rank and rank), None)
            if source is not None:
                yield from ((i, d, source, d) for d in range(rank))


def _gather_shape_follows(op):
    """A gather's result: its batch dimensions have the sizes of the indices'
    (but their index vector dimension), in order; an offset dimension that
    slices a whole operand dimension has that dimension's size (its slice
    size grows with the operand: _grow_whole_slices)."""
    dn = shlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    offset_dims = list(dn.offset_dims)
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    operand_shape = shape_of(op.operands[0])
    skipped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sources = [d for d in range(len(operand_shape)) if d not in skipped]
    for rdim, d in zip(offset_dims, offset_sources):
        if sizes[d] == operand_shape[d]:
            yield 0, rdim, 0, d
    rank = _ranked_rank(op.results[0]) or 0
    batch = [r for r in range(rank) if r not in offset_dims]
    index_dims = [d for d in range(len(shape_of(op.operands[1]))) if d != dn.index_vector_dim]
    yield from ((0, r, 1, d) for r, d in zip(batch, index_dims))


def _dynamic_slice_shape_follows(op):
    """A dynamic_slice's result dimension that takes a whole operand
    dimension has its size (its slice size grows with the operand:
    _grow_whole_slices)."""
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    yield from ((0, d, 0, d) for d, (s, n) in enumerate(zip(sizes, shape_of(op.operands[0]))) if s == n)


def _reshape_unit_dims(shape, result) -> tuple[list[int], list[tuple[int, int]]]:
    """The operand dimensions of size 1 a reshape from `shape` to `result`
    has no result dimension for, and the (operand, result) dimensions of
    size 1 that stand for each other: walking both shapes, a 1 pairs with a
    1 in the result where both stand at once; the others go in groups of
    equal products, whose 1s vanish into them."""
    dropped, pairs, i, j = [], [], 0, 0
    while i < len(shape):
        if shape[i] == 1:
            if j < len(result) and result[j] == 1:
                pairs.append((i, j))
                j += 1
            else:
                dropped.append(i)
            i += 1
            continue
        while j < len(result) and result[j] == 1:
            j += 1
        a, b = shape[i], result[j] if j < len(result) else 1
        i, j = i + 1, j + 1
        while a != b:   # (a group: until both products agree)
            if (i if a < b else j) >= (len(shape) if a < b else len(result)):
                break   # (an empty dimension: no product to agree on)
            if a < b:
                if shape[i] == 1:
                    dropped.append(i)
                a, i = a * shape[i], i + 1
            else:
                b, j = b * result[j], j + 1
    return dropped, pairs


def _conv_facts(op, op_id: int, out) -> None:
    dn = shlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
    attrs = op.attributes
    spatial = len(dn.input_spatial_dimensions)
    strides, lhs_dil, rhs_dil, padding = conv_window(op, spatial)
    out["reduced_dim"].append((op_id, 0, dn.input_feature_dimension))
    out["reduced_dim"] += [(op_id, 0, d) for d in dn.input_spatial_dimensions]
    out["reduced_dim"].append((op_id, 1, dn.kernel_input_feature_dimension))
    out["reduced_dim"] += [(op_id, 1, d) for d in dn.kernel_spatial_dimensions]
    for k in range(spatial):
        out["conv_window"].append((op_id, dn.output_spatial_dimensions[k], dn.input_spatial_dimensions[k],
                                   dn.kernel_spatial_dimensions[k], strides[k], padding[k][0], padding[k][1],
                                   lhs_dil[k], rhs_dil[k]))
    batch_groups = ir.IntegerAttr(attrs["batch_group_count"]).value if "batch_group_count" in attrs else 1
    if batch_groups == 1:   # (else the output batch is the input's divided by the groups)
        out["shape_follows"].append((op_id, 0, dn.output_batch_dimension, 0, dn.input_batch_dimension))
    out["shape_follows"].append((op_id, 0, dn.output_feature_dimension, 1, dn.kernel_output_feature_dimension))
