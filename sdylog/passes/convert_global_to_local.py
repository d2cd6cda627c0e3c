"""-sdy-convert-global-to-local: from a global program with explicit collectives
to the program each device runs.

Every tensor value takes the local type its sharding gives it (each sharded
dimension divided by the size of its axes). Shardy's collectives become
StableHLO collectives over the device groups of their axes; ops whose
meaning depends on where a shard sits (iota, sharded constants, pad, slice,
gather, scatter, convolution group counts) get per-device offsets from
tables indexed by the device id (`partition_id`, or `replica_id` with
`replica-count` > 1). Manual computations are inlined: their bodies already
are per-device code. Everything else keeps its meaning; only types change.

An op insert-explicit-reshards left without a per-device program (its
tensors on meshes of different axes, and a dimension that needs a reshard:
rules/reshard/errors.dl, no common mesh) is an error at the op, whatever
ran before: the insert pass's finding when it ran on the module as it is
now (ctx.no_common_mesh_hand_over), else the reshard rules' on the module
(sdylog/reshard/driver.py, no_common_mesh).

A module may still need reshards or collectives: an operand sharded
otherwise than its op, a dot whose contracting dimension is sharded and
no all-reduce (over those axes, its only use) after it, an op on one
device reading a sharded value. Made local as it stands, such a module
would compute something else (partial sums, misplaced shards), so the
pass asks the reshard rules (full version) what the module still needs
and reports the first op of these (rules/reshard/errors.dl):
- unlowered: an op it converts by types alone needs a reshard or
  collective (the ops of _SPECIAL have their own checks: the rules get
  them as converted_specially);
- unlowered_permutation: an op sharded along a dimension it permutes, on
  one device order (a reverse: no offsets give it its shards);
- unlowered_unaligned: an op sharded along a pass-through factor that one
  of its tensors lacks, where that is no broadcast (a reshape whose
  dimensions do not split into common factors: 16x3 to 6x8 is
  ([ij, m])->([ik, l])); no insert pass (nor Shardy's) reshards it, and
  its local op would mix shards.
When the full insert-explicit-reshards wrote this module and nothing
changed it since (ctx.no_common_mesh_hand_over, with its full_version),
unlowered is not asked (that pass met every such need), and the other two
only when an op of the module may have such a factor. The propagation
pipeline's export runs the non-full insert, and the partitioner
pipeline's passes between the insert and this one change the module: the
check runs on what they leave. A convolution sharded along a spatial
dimension whose window is more than one element (or strided, padded,
dilated) is refused by the convolution's own check.

Options: per-dim-all-gather, combine-multi-dimension-reduce-scatter,
enable-rgv3, replica-count, partition-count.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as shlo

from sdylog.ir.diagnostics import SdylogError, error_at
from sdylog.ir.rewrite import splat_of_type
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs
from sdylog.partition.build import (Builder, dense_i64_array, element_of, i64, i64_attr, identity_attr,
                                    replica_groups_attr, shape_of, tensor, zeros)
from sdylog.partition.shards import (axes_size, device_groups, local_group_count, local_shape, offset_table,
                                     permutation_pairs, shard_index)
from sdylog.passes import VERIFIED
from sdylog.passes.census import census
from sdylog.reshard.driver import (NO_COMMON_MESH_RELATIONS, ReshardOptions, current_hand_over, evaluate,
                                   no_common_mesh_error, reshard_program, run_facts)
from sdylog.facts.extract import post_order
from sdylog.ir.shardings import SHARDING_RULE
from sdylog.oprules.common import conv_window
from sdylog.oprules.registry import may_have_permutation_factors

# StableHLO ops whose meaning needs more than new types.
_SPECIAL = {
    "sdy.all_gather", "sdy.all_slice", "sdy.all_reduce", "sdy.all_to_all", "sdy.collective_permute",
    "sdy.reduce_scatter", "sdy.replicated_to_unreduced", "sdy.sharded_to_unreduced", "sdy.constant",
    "sdy.manual_computation", "sdy.named_computation",
    "stablehlo.iota", "stablehlo.pad", "stablehlo.slice", "stablehlo.concatenate",
    "stablehlo.convolution", "stablehlo.gather", "stablehlo.scatter", "stablehlo.reduce_window",
    "stablehlo.select_and_scatter", "stablehlo.while", "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice", "stablehlo.rng_bit_generator", "stablehlo.rng",
}
# Shardy's collectives: on a tensor with no elements they move nothing.
_COLLECTIVES = {"sdy.all_gather", "sdy.all_slice", "sdy.all_reduce", "sdy.all_to_all", "sdy.collective_permute",
                "sdy.reduce_scatter"}
# sdy ops that carry no data movement: their results just take local types.
_SDY_PLAIN = {"sdy.return", "sdy.propagation_barrier", "sdy.data_flow_edge", "sdy.sharding_group"}


def run(module: ir.Module, options: dict, ctx) -> str:
    if options["replica-count"] > 1 and options["partition-count"] > 1:
        raise error_at(module.operation, "convert-global-to-local does not support both replica-count > 1 "
                       "and partition-count > 1", ctx.filename)
    ops = census(module, ctx).all_ops()
    error, unlowered = _left_to_reshard(module, ctx, ops)
    if error is not None:
        raise error
    reductions, regathers, made_unreduced = _collective_reductions(module, ctx)
    with ir.Location.unknown(module.context):
        # (its own errors say more of their op)
        GlobalToLocal(module, options, ctx.filename, reductions, regathers, made_unreduced).convert(ops)
    if unlowered is not None:
        raise unlowered
    _verify(module, ctx.filename)
    return VERIFIED


def _left_to_reshard(module, ctx, ops) -> tuple[SdylogError | None, SdylogError | None]:
    """The errors at the first op of `module` (its ops `ops`) left without a
    common mesh, and at the first that still needs a reshard or collective
    (see the module docstring); None for none."""
    handed = current_hand_over(module, ctx)
    full = handed is not None and handed.full_version
    if full and not _may_leave_unconverted(module, ctx):
        return handed.error, None
    filename = getattr(ctx, "filename", "-")
    decisions = evaluate(reshard_program(), module, ctx,
                         lambda facts: {**run_facts(ReshardOptions(full_version=True), facts),
                                        "converted_specially": [(k,) for k in sorted(_SPECIAL)]},
                         NO_COMMON_MESH_RELATIONS + ["unlowered", "unlowered_permutation", "unlowered_unaligned"],
                         strict_rules=False)
    if full:
        # The full insert met every other need, but resolves no permutation
        # factor and reshards nothing along a factor a tensor lacks: only
        # unlowered_permutation and unlowered_unaligned still apply.
        return handed.error, _unlowered_error(decisions, filename, after_full_insert=True)
    return no_common_mesh_error(decisions, filename), _unlowered_error(decisions, filename)


def _may_leave_unconverted(module, ctx) -> bool:
    """Some op of `module` may be sharded along a permutation factor that no
    rule of this pass gives offsets (a reverse), or along a pass-through
    factor that one of its tensors lacks (a reshape whose dimensions do not
    split into common factors, a custom call's top-k), or carries its own
    rule: by the op's name, as resolve-permutation-factors asks."""
    ops, names = census(module, ctx).all_ops_and_names()
    return any((n not in _SPECIAL and may_have_permutation_factors(n)) or n in _MAY_LACK_FACTORS
               or (n.startswith("stablehlo.") and SHARDING_RULE in op.attributes) for op, n in zip(ops, names))


# The ops whose rules may have a pass-through factor that one of their
# tensors lacks and that is no broadcast's (rules/reshard/errors.dl,
# unlowered_unaligned): the full insert pass leaves them sharded along it.
_MAY_LACK_FACTORS = {"stablehlo.reshape", "stablehlo.custom_call"}


def _unlowered_error(decisions, filename: str, after_full_insert: bool = False) -> SdylogError | None:
    """The error at the first op (post-order) that `decisions` find unlowered,
    unlowered_permutation or unlowered_unaligned (`after_full_insert`: the
    latter two only); None for none."""
    facts = decisions.facts
    rows = [] if after_full_insert else list(decisions.engine.select("unlowered", "o", "n", "place", "i", "kind"))
    permuted = {r[0]: r[1:] for r in decisions.engine.select("unlowered_permutation", "o", "place", "i", "d")}
    unaligned = {r[0]: r[1:] for r in decisions.engine.select("unlowered_unaligned", "o", "j", "f", "j2")}
    if not rows and not permuted and not unaligned:
        return None
    first = post_order(facts, {r[0] for r in rows} | set(permuted) | set(unaligned))[0]
    op = facts.ops[first]
    of = {"operand": "operand {}", "result": "result {}", "use": "operand {} (a use of its value)"}
    if first in unaligned:
        j, f, j2 = unaligned[first]
        return error_at(op, f"'{op.name}' op has {_rule_tensor(op, j)} sharded along factor {_factor_symbol(f)} "
                            f"of its sharding rule, which {_rule_tensor(op, j2)} does not have: "
                            "convert-global-to-local gives it no per-device program, and no pass inserts the "
                            f"reshard it needs (reshard {_rule_tensor(op, j)} to replicated along that factor "
                            "before it)", filename)
    mine = [r for r in rows if r[0] == first]
    if not mine:
        place, i, d = permuted[first]
        return error_at(op, f"'{op.name}' op is sharded along dimension {d} of {of[place].format(i)}, a "
                            "dimension it permutes: convert-global-to-local gives it no per-device program "
                            "(reshard that dimension to replicated before it)", filename)
    _, _, place, i, kind = min(mine)
    what = {"reshard": "a reshard", "all_reduce": "an all-reduce"}.get(kind, f"a {kind} collective")
    return error_at(op, f"'{op.name}' op needs {what} of {of[place].format(i)} before convert-global-to-local: "
                        "its shardings do not make a per-device program as they stand (-sdy-partitioner-pipeline "
                        "inserts what they need before it converts)", filename)


def _collective_reductions(module, ctx) -> tuple[dict, set, dict]:
    """The reduction (stablehlo op name: "maximum", ...) of each sdy.all_reduce
    and sdy.reduce_scatter that does not sum, and those that gather the
    per-device results of a reduce with no collective body and reduce them
    again (rules/partition/reduction_kind.dl); an error at a reducer whose
    partial results no collective combines. Each collective is named by its
    result (an operation's hash changes with its operands, which the
    conversion replaces). Third, the operands with no sharding to make
    unreduced before their op (made_unreduced, same file): the op's key (its
    first result; a func.return: its function's name) -> [(operand index,
    mesh, axes)]."""
    if not _may_expect_unreduced(module, ctx):
        return {}, set(), {}
    from sdylog.partition.facts import explicit_facts, run_rules
    facts = explicit_facts(module)
    engine = run_rules("reduction_kind", facts)
    for _, o in engine.select("reducer_not_collective", "c", "o", ordered=True):
        op = facts.ops[o]
        raise error_at(op, f"'{op.name}' op reduces along a sharded dimension with a reducer that is not one "
                           "elementwise op per result: no all-reduce combines its per-device results (reshard the "
                           "reduced dimension to replicated before it)",
                       getattr(ctx, "filename", "-"))
    kinds = {facts.ops[c].results[0]: kind
             for c, kind in engine.select("collective_reduction", "c", "kind", ordered=True) if kind != "add"}
    regathers = {facts.ops[c].results[0] for c, _ in engine.select("collective_regathers", "c", "o")}
    made: dict = {}
    for u, i, m, a, pre, z in engine.select("made_unreduced", "u", "i", "m", "a", "pre", "z", ordered=True):
        op = facts.ops[u]
        key = op.results[0] if len(op.results) else _func_name(op)
        mesh = facts.meshes[m]
        ref = AxisRef(a) if pre == 1 and z == mesh.axis_sizes[a] else AxisRef(a, SubAxis(pre, z))
        uses = made.setdefault(key, {})
        uses.setdefault((i, m), (mesh, []))[1].append(ref)
    return kinds, regathers, {key: [(i, mesh, tuple(axes)) for (i, _), (mesh, axes) in uses.items()]
                              for key, uses in made.items()}


# The sdy collectives whose operand is expected unreduced where their
# out_sharding is (rules/partition/reduction_kind.dl, keeps_unreduced_kind).
_KEEPING = ("sdy.all_gather", "sdy.all_slice", "sdy.all_to_all", "sdy.collective_permute")


def _may_expect_unreduced(module, ctx) -> bool:
    """Some collective of the module reduces, or some op may expect an
    operand unreduced (a function result or collective with unreduced
    axes): the rules of reduction_kind.dl may derive something."""
    c = census(module, ctx)
    if c.has("sdy.all_reduce", "sdy.reduce_scatter"):
        return True
    reader = irs.ShardingReader()
    for top in module.body.operations:
        fn = top.operation
        if fn.name == "func.func":
            n = len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
            if any((s := reader.func_result_sharding(fn, i)) is not None and s.unreduced for i in range(n)):
                return True
    return any(reader.tensor(op.attributes["out_sharding"]).unreduced
               for name in _KEEPING for op in c.ops(name))


def _func_name(op) -> str:
    """The name of the function `op` is in."""
    while op.name != "func.func":
        op = op.parent.operation
    return ir.StringAttr(op.attributes["sym_name"]).value


def _rule_tensor(op, j: int) -> str:
    """Tensor j of `op`'s sharding rule (operands first, then results), in words."""
    n = len(op.operands)
    return f"operand {j}" if j < n else f"result {j - n}"


def _factor_symbol(f: int) -> str:
    """Factor f as a sharding rule prints it: i, j, ..., z, then z_1, z_2, ..."""
    return chr(ord("i") + f) if f < 18 else f"z_{f - 17}"


def _verify(module: ir.Module, filename: str) -> None:
    """A per-device program whose types disagree means some sharding or collective
    was implicit (an op without `sdy.sharding`, a reshard without collectives)."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        from sdylog.ir.diagnostics import verifier_location
        diags = list(e.error_diagnostics)
        first = diags[0] if diags else None
        message = (first.message if first else str(e)).strip()
        # (an op of JAX's private helpers has only a name: the failing op's enclosing place)
        where = verifier_location(module, first.location, filename) if first else None
        raise SdylogError(f"the per-device program does not verify: {message} (are all shardings and "
                          "collectives explicit?)", where) from None


@dataclass
class GlobalToLocal:
    module: ir.Module
    options: dict
    filename: str
    reductions: dict = field(default_factory=dict)   # sdy collective's result -> its body's op ("maximum"), not "add"
    regathers: set = field(default_factory=set)      # results of the sdy collectives that gather a reduce's results
    # an op's key (its first result; a func.return: its function's name) ->
    # [(operand index, mesh, axes)]: operands with no sharding made unreduced before it
    made_unreduced: dict = field(default_factory=dict)
    meshes: dict = field(default_factory=dict)
    # A value's type and sharding as they were before the conversion: types
    # are recorded as they change, shardings as they are first read (an op
    # may lose its own once converted); values made by the conversion are
    # given their old value's.
    global_types: dict = field(default_factory=dict)
    shardings: dict = field(default_factory=dict)
    reader: irs.ShardingReader = field(default_factory=irs.CachedShardingReader)
    next_channel: int = 1
    _local_types: dict = field(default_factory=dict)   # (global type, id(sharding)) -> (sharding, local type)
    _groups: dict = field(default_factory=dict)        # (axes, mesh) -> replica groups attribute, group size
    _regathered: dict = field(default_factory=dict)    # (partial values, axes, mesh) -> the reduce of them over the axes

    # --- set-up -----------------------------------------------------------------------
    def convert(self, ops: list) -> None:
        """Convert the module, whose ops are `ops` (pre-order)."""
        self.meshes = meshes_of_module(self.module)
        top = 0
        for op in ops:
            attrs = op.attributes
            if "channel_handle" in attrs:
                top = max(top, shlo.ChannelHandle(attrs["channel_handle"]).handle)
        self.next_channel = top + 1
        for op in list(self.module.body.operations):
            if op.operation.name == "func.func":
                self.convert_func(op.operation)

    def error(self, op, message: str) -> SdylogError:
        return error_at(op, message, self.filename)

    def channel(self) -> int:
        c = self.next_channel
        self.next_channel += 1
        return c

    def mesh(self, sharding: TensorSharding, op) -> Mesh | None:
        if isinstance(sharding.mesh, Mesh):
            return sharding.mesh
        m = self.meshes.get(sharding.mesh)
        if m is None:
            raise self.error(op, f"failed to resolve mesh @{sharding.mesh}")
        return m

    # --- types --------------------------------------------------------------------------
    def global_type(self, value):
        t = self.global_types.get(value)
        return value.type if t is None else t

    def global_shape(self, value) -> tuple[int, ...]:
        return tuple(ir.RankedTensorType(self.global_type(value)).shape)

    def set_local_type(self, value, local_type) -> None:
        self.global_types.setdefault(value, value.type)
        value.set_type(local_type)

    def sharding(self, value) -> TensorSharding | None:
        s = self.shardings.get(value, _UNREAD)
        if s is _UNREAD:
            try:
                s = self.reader.sharding_of(value)
            except SdylogError:
                s = None
            self.shardings[value] = s
        return s

    def local_type(self, global_type, sharding: TensorSharding | None, op):
        if sharding is None or not isinstance(global_type, ir.RankedTensorType):
            return global_type
        # Values are many, distinct (type, sharding) pairs a few: the reader
        # hands out one sharding object per attribute, so the pair is looked
        # up by the sharding's identity (hashing it costs more than the rest)
        # and the entry keeps that object, to tell it from a later one at
        # the same address.
        known = self._local_types.get((global_type, id(sharding)))
        if known is not None and known[0] is sharding:
            return known[1]
        local = self._local_type(global_type, sharding, op)
        self._local_types[(global_type, id(sharding))] = (sharding, local)
        return local

    def _local_type(self, global_type, sharding: TensorSharding, op):
        mesh = self.mesh(sharding, op)
        t = ir.RankedTensorType(global_type)
        try:
            shape = local_shape(tuple(t.shape), sharding, mesh)
        except SdylogError as e:
            raise self.error(op, f"cannot compute the local type of {t}: {e.message}") from None
        return ir.RankedTensorType.get(list(shape), t.element_type, t.encoding)

    def local_type_of(self, value, op):
        return self.local_type(self.global_type(value), self.sharding(value), op)

    def localize(self, value, op) -> None:
        self.set_local_type(value, self.local_type_of(value, op))

    def localize_results(self, op) -> None:
        """localize() of each result of `op`, the op's sharding attribute read
        once for all of them (most ops of a program come this way)."""
        results = op.results
        if not len(results):
            return
        shardings = self.reader.result_shardings(*irs.result_sharding_attr(op.name, op.attributes))
        for i, (r, t) in enumerate(zip(results, results.types)):
            self.global_types[r] = t
            r.set_type(self.local_type(t, shardings[i] if i < len(shardings) else None, op))

    def replace(self, old, new) -> None:
        """Uses of `old` now use `new`, which carries old's global type and sharding."""
        self.global_types[new] = self.global_type(old)
        self.shardings[new] = self.sharding(old)
        old.replace_all_uses_with(new)

    def builder(self, op, after: bool = False) -> Builder:
        ip = ir.InsertionPoint.after(op) if after else ir.InsertionPoint(op)
        return Builder(ip, op.location)

    def device_id(self, b: Builder) -> ir.Value:
        return b.device_id(self.options["replica-count"] > 1)

    def offset(self, b: Builder, mesh: Mesh, axes, shard_size: int) -> ir.Value:
        """tensor<i64>: this device's global offset along a dimension sharded by `axes`."""
        return b.table_lookup(offset_table(mesh, axes, shard_size), self.device_id(b))

    def groups_attr(self, axes, mesh: Mesh, sharding: TensorSharding):
        """Replica groups of a collective over `axes` (mesh-axes form with enable-rgv3)."""
        axes = tuple(axes)
        if self.options["enable-rgv3"] and all(a.sub is None for a in axes) and isinstance(sharding.mesh, str):
            attr = shlo.ReplicaGroupMeshAxesAttr.get(
                ir.FlatSymbolRefAttr.get(sharding.mesh), ir.ArrayAttr.get([shlo.AxisRefAttr.get(a.name) for a in axes]))
            return attr, axes_size(axes, mesh)
        known = self._groups.get((axes, mesh))   # (models repeat a few collectives many times)
        if known is None:
            groups = device_groups(axes, mesh)
            known = self._groups[(axes, mesh)] = (replica_groups_attr(groups), len(groups[0]))
        return known

    # --- walking ------------------------------------------------------------------------
    def convert_func(self, func) -> None:
        if not func.regions[0].blocks:
            return
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        block = func.regions[0].blocks[0]
        for a in block.arguments:
            self.localize(a, func)
        results = [self.local_type(t, self.reader.func_result_sharding(func, i), func) for i, t in enumerate(ftype.results)]
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], results))
        self.convert_block(block)

    def convert_block(self, block) -> None:
        for op in list(block.operations):
            self.convert_op(op.operation)

    def convert_op(self, op) -> None:
        name = op.name
        if self.made_unreduced:
            self.make_operands_unreduced(op)
        if name in _SPECIAL:
            if name in _COLLECTIVES and self.moves_nothing(op):
                return
            try:
                getattr(self, "convert_" + name.split(".", 1)[1])(op)
            except SdylogError as e:
                if e.location and "failed to legalize" not in e.message:
                    # one diagnostic, which also says what MLIR's conversion
                    # framework reports of an op no pattern could convert (in
                    # a second error at the op, which Shardy's lit cases expect)
                    e.message += f" (failed to legalize operation '{name}' that was explicitly marked illegal)"
                raise
            return
        if name.startswith("sdy.") and name not in _SDY_PLAIN:
            if name == "sdy.reshard":
                self.refuse_maximal_reshard(op)
            raise self.error(op, f"'{name}' must be lowered to collectives before convert-global-to-local")
        self.convert_generic(op)

    def moves_nothing(self, op) -> bool:
        """A collective on a tensor with no elements (JAX makes them: a pad
        with a 0 side, an associative_scan's odd/even split) moves nothing,
        and StableHLO rejects some of them (an all_gather of a 0-size
        dimension): its result is the operand, of the result's local type
        (a reshape of no elements). False, and nothing done, otherwise."""
        x = op.operands[0]
        if 0 not in shape_of(x):
            return False
        local = self.local_type_of(op.results[0], op)
        same = x.type == local
        self.finish(op, [x if same else self.builder(op).reshape(x, tuple(ir.RankedTensorType(local).shape))])
        return True

    def refuse_maximal_reshard(self, op) -> None:
        """A reshard onto or off a maximal mesh (one device) that
        resolve-single-device-sharding left (no op placed on that device reads
        or makes its value) has no collectives: the input's limit, said at the
        reshard, not the pass-ordering error that follows."""
        for s in (self.sharding(op.operands[0]), TensorSharding.from_attr(op.attributes["sharding"])):
            mesh = None if s is None else self.mesh(s, op)
            if mesh is not None and mesh.is_maximal:
                where = f"@{s.mesh}" if isinstance(s.mesh, str) else str(mesh)
                raise self.error(op, f"moving a value onto or off the maximal mesh {where} (device "
                                     f"{mesh.device_ids[0]}) is not supported but for an op placed on that device: "
                                     "sdylog's SPMD partitioner has no collectives for it")

    def convert_generic(self, op) -> None:
        """Regions keep their types (reduction bodies work on scalars); results turn local."""
        regions = op.regions
        if len(regions):   # (most ops have none)
            for region in regions:
                for block in region.blocks:
                    self.convert_block(block)
        self.localize_results(op)

    # --- Shardy collectives ----------------------------------------------------------------
    def convert_all_gather(self, op) -> None:
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        per_dim = irs.axis_ref_lists(op.attributes["gathering_axes"])
        dims = [d for d, axes in enumerate(per_dim) if axes]
        if not dims:
            raise self.error(op, "an all_gather without gathering axes should have been removed")
        x = op.operands[0]
        b = self.builder(op)
        if self.options["per-dim-all-gather"] or len(dims) == 1:
            cur = x
            for d in reversed(dims):
                groups, size = self.groups_attr(per_dim[d], mesh, out)
                cur = b.all_gather(cur, d, groups, size, self.channel())
        else:
            local = shape_of(x)
            factors = [axes_size(per_dim[d], mesh) for d in dims]
            cur = b.reshape(x, (1,) + local)
            all_axes = [a for d in dims for a in per_dim[d]]
            groups, size = self.groups_attr(all_axes, mesh, out)
            cur = b.all_gather(cur, 0, groups, size, self.channel())
            cur = b.reshape(cur, tuple(factors) + local)
            perm, k = [], 0
            for i in range(len(local)):
                if i in dims:
                    perm.append(k)
                    k += 1
                perm.append(i + len(dims))
            cur = b.transpose(cur, perm)
            final = [n * (factors[dims.index(i)] if i in dims else 1) for i, n in enumerate(local)]
            cur = b.reshape(cur, final)
        self.finish(op, [cur])

    def convert_all_slice(self, op) -> None:
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        per_dim = irs.axis_ref_lists(op.attributes["slicing_axes"])
        local = self.local_type_of(op.results[0], op)
        b = self.builder(op)
        self.finish(op, [self.slice_for_axes(b, op.operands[0], mesh, per_dim, local)])

    def slice_for_axes(self, b: Builder, x, mesh: Mesh, per_dim, local_type) -> ir.Value:
        """This device's block of `x` along dimensions sharded by `per_dim` axes."""
        shape = tuple(ir.RankedTensorType(local_type).shape)
        starts = []
        for axes, n in zip(per_dim, shape):
            if not axes:
                starts.append(b.scalar(0, i64()))
            else:
                starts.append(self.offset(b, mesh, axes, n))
        return b.dynamic_slice(x, starts, shape)

    def convert_all_reduce(self, op) -> None:
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        axes = self.reader.axes(op.attributes["reduction_axes"])
        if op.results[0] in self.regathers:
            self.finish(op, [self.regather(op, axes, mesh, out)])
            return
        b = self.builder(op)
        groups, _ = self.groups_attr(axes, mesh, out)
        kind = self.reductions.get(op.results[0], "add")
        res = op.results[0]
        r = b.all_reduce(op.operands[0], groups, self.channel(), kind, self.local_type(res.type, out, op))
        self.finish(op, [r])

    def regather(self, op, axes, mesh: Mesh, sharding: TensorSharding) -> ir.Value:
        """The operand of collective `op`, a per-device result of a reduce
        whose body no collective has (an argmax's), reduced over `axes`:
        each of the reduce's per-device results gathered along the axes
        (a new leading dimension), then reduced along it by a copy of the
        reduce, its body and init values (rules/partition/reduction_kind.dl,
        collective_regathers). Made once for all the reduce's results, right
        after it. A reduction over more axes later does the same after that
        copy."""
        x = op.operands[0]
        reduce = x.owner
        if not isinstance(reduce, ir.OpView) or reduce.operation.name != "stablehlo.reduce":
            raise self.error(op, f"'{op.name}' op gathers the per-device results of a reduce, but its operand is "
                                 "no reduce's result")
        reduce = reduce.operation
        partials = tuple(reduce.results)
        key = (partials, tuple(axes), mesh)
        again = self._regathered.get(key)
        if again is None:
            groups, size = self.groups_attr(axes, mesh, sharding)
            b = Builder(ir.InsertionPoint.after(reduce), op.location)
            gathered = [b.all_gather(b.reshape(p, (1,) + shape_of(p)), 0, groups, size, self.channel())
                        for p in partials]
            again = reduce.clone(ip=b.ip).operation
            for j, g in enumerate(gathered):
                again.operands[j] = g
            again.attributes["dimensions"] = dense_i64_array([0])
            if "sdy.sharding" in again.attributes:
                del again.attributes["sdy.sharding"]
            self._regathered[key] = again
        return again.results[partials.index(x)]

    def convert_replicated_to_unreduced(self, op) -> None:
        """A replicated value made unreduced (partial sums) along axes: the first
        device of each group along them keeps it, the others hold zeros, so
        that summing over the axes gives the value back (partitioning.md,
        `all_reduce . replicated_to_unreduced = id`)."""
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        axes = self.reader.axes(op.attributes["axes"])
        local = self.local_type(op.results[0].type, out, op)
        self.finish(op, [self.leader_or_zeros(self.builder(op), op.operands[0], local, mesh, axes, op)])

    def leader_or_zeros(self, b: Builder, x, local, mesh: Mesh, axes, op) -> ir.Value:
        """`x` (of type `local`) on the first device of each group along
        `axes`, zeros on the others."""
        zero = self.unreduced_zeros(local, op)
        leader = [shard_index(d, mesh, axes) == 0 for d in range(mesh.num_devices)]
        is_leader = b.reshape(b.dynamic_slice(b.bool_table(leader), [self.device_id(b)], [1]), ())
        is_leader = b.broadcast(is_leader, shape_of(x), [])
        return b.select(is_leader, x, b.constant(zero))

    def unreduced_zeros(self, local, op) -> ir.Attribute:
        """Zeros of type `local`, what the devices that do not keep a value
        made unreduced hold (an error at op for an element type without)."""
        zero = zeros(ir.RankedTensorType(local))
        if zero is None:
            raise self.error(op, f"cannot make a value of type {local} unreduced: no zero of its element type")
        return zero

    def make_operands_unreduced(self, op) -> None:
        """Operands of `op` with no sharding where it expects them unreduced
        (a function result, a collective: rules/partition/reduction_kind.dl,
        made_unreduced) made so before it, as a replicated_to_unreduced is
        lowered: each device holds the whole value, and their sum must be the
        value."""
        results = op.results
        key = results[0] if len(results) else (_func_name(op) if op.name == "func.return" else None)
        uses = self.made_unreduced.get(key)
        if not uses:
            return
        b = self.builder(op)
        for i, mesh, axes in uses:
            x = op.operands[i]
            made = self.leader_or_zeros(b, x, x.type, mesh, axes, op)
            self.global_types[made] = self.global_type(x)
            self.shardings[made] = self.sharding(x)
            op.operands[i] = made

    def convert_sharded_to_unreduced(self, op) -> None:
        """Axes sharding dimensions made unreduced (partial sums) along them:
        each device holds its shard in place in the block the remaining axes
        give it, zeros elsewhere, so that summing over the axes gathers the
        value (`all_reduce . sharded_to_unreduced = all_gather`, Shardy's op
        docs)."""
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        per_dim = irs.axis_ref_lists(op.attributes["axes"])
        x = op.operands[0]
        local = self.local_type(op.results[0].type, out, op)
        zero = self.unreduced_zeros(local, op)
        b = self.builder(op)
        starts = [self.offset(b, mesh, axes, n) if axes else b.scalar(0, i64())
                  for axes, n in zip(per_dim, shape_of(x))]
        placed = b.one("stablehlo.dynamic_update_slice", [b.constant(zero), x] + starts, local)
        self.finish(op, [placed])

    def convert_reduce_scatter(self, op) -> None:
        x = op.operands[0]
        in_sharding = self.sharding(x) or self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(in_sharding, op)
        per_dim = irs.axis_ref_lists(op.attributes["reduce_scatter_axes"])
        dims = [d for d, axes in enumerate(per_dim) if axes]
        if not dims:
            raise self.error(op, "a reduce_scatter without axes should have been removed")
        all_axes = [a for d in dims for a in per_dim[d]]
        local = self.local_type_of(op.results[0], op)
        if op.results[0] in self.regathers:
            reduced = self.regather(op, all_axes, mesh, in_sharding)
            self.finish(op, [self.slice_for_axes(self.builder(op), reduced, mesh, per_dim, local)])
            return
        kind = self.reductions.get(op.results[0], "add")
        b = self.builder(op)
        groups, _ = self.groups_attr(all_axes, mesh, in_sharding)
        if len(dims) == 1:
            r = b.reduce_scatter(x, dims[0], groups, self.channel(), local, kind)
        elif self.options["combine-multi-dimension-reduce-scatter"]:
            shape = shape_of(x)
            factors = {d: axes_size(per_dim[d], mesh) for d in dims}
            split, factor_pos = [], []
            for i, n in enumerate(shape):
                if i in factors:
                    if n % factors[i]:
                        raise self.error(op, f"dimension {i} is not divisible by its scattering factor")
                    factor_pos.append(len(split))
                    split += [factors[i], n // factors[i]]
                else:
                    split.append(n)
            cur = b.reshape(x, split)
            perm = factor_pos + [i for i in range(len(split)) if i not in factor_pos]
            cur = b.transpose(cur, perm)
            total = int(np.prod(list(factors.values())))
            local_shape_ = tuple(ir.RankedTensorType(local).shape)
            cur = b.reshape(cur, (total,) + local_shape_)
            rs_type = tensor((1,) + local_shape_, element_of(x))
            cur = b.reduce_scatter(cur, 0, groups, self.channel(), rs_type, kind)
            r = b.reshape(cur, local_shape_)
        else:
            reduced = b.all_reduce(x, groups, self.channel(), kind)
            r = self.slice_for_axes(b, reduced, mesh, per_dim, local)
        self.finish(op, [r])

    def convert_all_to_all(self, op) -> None:
        out = self.reader.tensor(op.attributes["out_sharding"])
        mesh = self.mesh(out, op)
        params = irs.all_to_all_params(op.attributes["params"])
        x = op.operands[0]
        b = self.builder(op)
        if len(params) == 1:
            p = params[0]
            groups, k = self.groups_attr(p.axes, mesh, out)
            if shape_of(x)[p.tgt_dim] % k:
                raise self.error(op, "dimension not divisible by the number of devices per group")
            r = b.all_to_all(x, p.tgt_dim, p.src_dim, k, groups, self.channel())
            self.finish(op, [r])
            return
        shape = shape_of(x)
        ordered = sorted(params, key=lambda p: p.tgt_dim)
        factors = [axes_size(p.axes, mesh) for p in ordered]
        split, factor_pos = [], []
        for i, n in enumerate(shape):
            ps = [j for j, p in enumerate(ordered) if p.tgt_dim == i]
            if not ps:
                split.append(n)
                continue
            f = factors[ps[0]]
            if n % f:
                raise self.error(op, "dimension not divisible by the number of devices per parameter")
            factor_pos.append(len(split))
            split += [f, n // f]
        cur = b.reshape(x, split)
        perm0 = factor_pos + [i for i in range(len(split)) if i not in factor_pos]
        cur = b.transpose(cur, perm0)
        moved_shape = shape_of(cur)
        all_axes = [a for p in ordered for a in p.axes]
        groups, g = self.groups_attr(all_axes, mesh, out)
        m = len(ordered)
        cur = b.reshape(cur, (g,) + moved_shape[m:])
        cur = b.all_to_all(cur, 0, 0, g, groups, self.channel())
        cur = b.reshape(cur, moved_shape)
        perm1 = [i + m for i in range(len(shape))]
        for j, p in enumerate(ordered):
            perm1.insert(perm1.index(p.src_dim + m), j)
        cur = b.transpose(cur, perm1)
        t_shape = shape_of(cur)
        final, i = [], 0
        while i < len(t_shape):
            if perm1[i] < m:
                final.append(t_shape[i] * t_shape[i + 1])
                i += 2
            else:
                final.append(t_shape[i])
                i += 1
        self.finish(op, [b.reshape(cur, final)])

    def convert_collective_permute(self, op) -> None:
        x = op.operands[0]
        out = self.reader.tensor(op.attributes["out_sharding"])
        in_sharding = self.sharding(x)
        if in_sharding is None:
            raise self.error(op, "the operand of a collective_permute has no sharding")
        pairs = permutation_pairs(in_sharding, self.mesh(in_sharding, op), out, self.mesh(out, op))
        b = self.builder(op)
        self.finish(op, [b.collective_permute(x, pairs, self.channel())])

    def convert_constant(self, op) -> None:
        res = op.results[0]
        local = self.local_type_of(res, op)
        value = op.attributes["value"]
        b = self.builder(op)
        global_type = self.global_type(res)
        dense = ir.DenseElementsAttr(value)
        if local == global_type:
            self.finish(op, [b.constant(value)])
        elif dense.is_splat:
            self.finish(op, [b.constant(splat_of_type(dense, local))])
        else:
            sharding = self.sharding(res)
            whole = b.constant(value)
            per_dim = [list(d.axes) for d in sharding.dims]
            self.finish(op, [self.slice_for_axes(b, whole, self.mesh(sharding, op), per_dim, local)])

    def drop_sharding(self, op) -> None:
        """The op loses its `sdy.sharding`; its results keep theirs for the conversion."""
        if "sdy.sharding" in op.attributes:
            for r in op.results:
                self.sharding(r)
            del op.attributes["sdy.sharding"]

    def finish(self, op, new_values) -> None:
        for old, new in zip(op.results, new_values):
            self.replace(old, new)
        op.erase()

    # --- computations -----------------------------------------------------------------------
    def convert_manual_computation(self, op) -> None:
        body = op.regions[0].blocks[0]
        for a in body.arguments:
            self.localize(a, op)
        self.convert_block(body)
        for arg, operand in zip(body.arguments, op.operands):
            arg.replace_all_uses_with(operand)
        # (after the replacement: a block argument returned as it is would
        # be held here, and freed with the op)
        ret = body.operations[len(body.operations) - 1]
        results = list(ret.operands)
        for inner in list(body.operations):
            if inner.operation.name == "sdy.return":
                continue
            inner.operation.move_before(op)
        for old, new in zip(op.results, results):
            if new.type != self.local_type_of(old, op):
                raise self.error(op, f"the manual computation's body returns {new.type} where "
                                     f"{self.local_type_of(old, op)} is expected")
            self.replace(old, new)
        op.erase()

    def convert_named_computation(self, op) -> None:
        body = op.regions[0].blocks[0]
        for a in body.arguments:
            self.localize(a, op)
        self.convert_block(body)
        for r in op.results:
            self.localize(r, op)

    def convert_while(self, op) -> None:
        # A loop carries its operands through: its results have their (local) types.
        for r, v in zip(op.results, op.operands):
            self.set_local_type(r, v.type)
        for region in op.regions:
            block = region.blocks[0]
            for a, r in zip(block.arguments, op.results):
                self.set_local_type(a, r.type)
            self.convert_block(block)

    # --- StableHLO ops whose meaning depends on the shard ------------------------------------
    def convert_iota(self, op) -> None:
        res = op.results[0]
        sharding = self.sharding(res)
        if irs.is_replicated(sharding):
            return
        mesh = self.mesh(sharding, op)
        local = self.local_type_of(res, op)
        dim = ir.IntegerAttr(op.attributes["iota_dimension"]).value
        b = self.builder(op)
        cur = b.iota(local, dim)
        axes = sharding.dims[dim].axes
        if axes:
            shape = tuple(ir.RankedTensorType(local).shape)
            off = self.offset(b, mesh, axes, shape[dim])
            off = b.convert(off, element_of(cur))
            cur = b.binary("add", cur, b.broadcast(off, shape, []))
        self.finish(op, [cur])

    def convert_rng_bit_generator(self, op) -> None:
        """Every device generates the whole tensor of bits from the (replicated)
        state and keeps its shard, so the bits do not depend on the mesh: a
        generator of the local shape would give each device the same first
        bits of the stream. (XLA's SPMD partitioner does the same: no handler
        of its own, its default action runs the op on replicated operands and
        reshards the result.) The output state, from the whole generation,
        is the same on every device."""
        state, bits = op.results[0], op.results[1]
        for v in (op.operands[0], state):
            if not irs.is_replicated(self.sharding(v)):
                raise self.error(op, "the state of a stablehlo.rng_bit_generator must be replicated")
        self.localize_results(op)
        self.keep_shard_of_whole(op, bits)

    def convert_rng(self, op) -> None:
        """Like rng_bit_generator's bits: every device draws the whole tensor
        (its shape operand, a constant, stays the global shape) and keeps its
        shard, so the numbers do not depend on the mesh."""
        self.localize_results(op)
        self.keep_shard_of_whole(op, op.results[0])

    def keep_shard_of_whole(self, op, value) -> None:
        """`value`, a localized result of `op` that `op` computes whole on
        every device, gets back its global type; its users read this device's
        shard of it (a dynamic_slice)."""
        sharding = self.sharding(value)
        local = value.type
        if irs.is_replicated(sharding):
            return
        value.set_type(self.global_type(value))
        b = self.builder(op, after=True)
        per_dim = [list(d.axes) for d in sharding.dims]
        mine = self.slice_for_axes(b, value, self.mesh(sharding, op), per_dim, local)
        value.replace_all_uses_except(mine, mine.owner.operation)
        self.global_types[mine] = self.global_type(value)
        self.shardings[mine] = sharding

    def convert_concatenate(self, op) -> None:
        dim = ir.IntegerAttr(op.attributes["dimension"]).value
        out = self.sharding(op.results[0])
        if out is not None and out.dims[dim].axes:
            raise self.error(op, f"dimension {dim} is sharded but the concatenation is on this dimension.")
        for i, v in enumerate(op.operands):
            s = self.sharding(v)
            if irs.is_replicated(s):
                continue
            if s.dims[dim].axes:
                raise self.error(op, f"operand {i} is sharded on concatenation dimension {dim}. "
                                     "This is not supported.")
            for d in range(len(s.dims)):
                if d == dim:
                    continue
                out_axes = out.dims[d].axes if out is not None else ()
                if s.dims[d].axes != out_axes:
                    raise self.error(op, f"dimension {d} has mismatched sharding axes. This requires a "
                                         "reshard which should have been handled by previous passes.")
        self.convert_generic(op)

    def convert_convolution(self, op) -> None:
        lhs, rhs = op.operands[0], op.operands[1]
        ls, rs = self.sharding(lhs), self.sharding(rhs)
        if irs.is_replicated(ls) and irs.is_replicated(rs) and irs.is_replicated(self.sharding(op.results[0])):
            self.convert_generic(op)
            return
        dn = shlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        self._check_conv_window(op, dn, ls, self.sharding(op.results[0]))

        def local_count(name, sharding, dim):
            count = ir.IntegerAttr(op.attributes[name]).value if name in op.attributes else 1
            if count <= 1 or sharding is None or not sharding.dims[dim].axes:
                return count
            size = axes_size(sharding.dims[dim].axes, self.mesh(sharding, op))
            local = local_group_count(count, size)
            if local is None:
                raise self.error(op, f"{name} {count} does not divide into, nor is a divisor of, the {size} "
                                     "shards of its dimension")
            return local

        fgc = local_count("feature_group_count", rs, dn.kernel_output_feature_dimension)
        bgc = local_count("batch_group_count", ls, dn.input_batch_dimension)
        op.attributes["feature_group_count"] = i64_attr(fgc)
        op.attributes["batch_group_count"] = i64_attr(bgc)
        self.convert_generic(op)
        self.drop_sharding(op)  # a rebuilt op, as upstream prints it

    def _check_conv_window(self, op, dn, lhs_sharding, out_sharding) -> None:
        """A convolution sharded along a spatial dimension is local only when
        that dimension's window is one element, no stride, padding or
        dilation (a pass-through): no offsets give each device the inputs
        its windows read across its shard's edges."""
        window = conv_window(op, len(dn.input_spatial_dimensions))
        kernel = shape_of(op.operands[1])
        for i, (d, o) in enumerate(zip(dn.input_spatial_dimensions, dn.output_spatial_dimensions)):
            sharded = [s.dims[dim].axes for s, dim in ((lhs_sharding, d), (out_sharding, o))
                       if s is not None and axes_size(s.dims[dim].axes, self.mesh(s, op)) > 1]
            trivial = (kernel[dn.kernel_spatial_dimensions[i]] == 1 and window.strides[i] == 1
                       and window.lhs_dilation[i] == 1 and window.rhs_dilation[i] == 1
                       and window.padding[i] == (0, 0))
            if sharded and not trivial:
                raise self.error(op, f"In op {op.name} dimension {d} is sharded but is not a pass-through dimension.")

    def convert_pad(self, op) -> None:
        x, pad_value = op.operands[0], op.operands[1]
        res = op.results[0]
        ins, outs = self.sharding(x), self.sharding(res)
        if irs.is_replicated(ins):
            if not irs.is_replicated(outs):
                raise self.error(op, "a pad of a replicated operand must have a replicated result")
            self.convert_generic(op)
            return
        mesh = self.mesh(ins, op)
        g_in, g_out = self.global_shape(x), self.global_shape(res)
        low = list(ir.DenseI64ArrayAttr(op.attributes["edge_padding_low"]))
        interior = list(ir.DenseI64ArrayAttr(op.attributes["interior_padding"]))
        n = mesh.num_devices
        rank = len(g_in)
        offsets, uniform = [], []
        for i in range(rank):
            in_axes = ins.dims[i].axes
            out_axes = outs.dims[i].axes if outs is not None else ()
            if in_axes != out_axes:
                raise self.error(op, f"dimension {i} has mismatched sharding axes. This requires a reshard "
                                     "collective which should have been handled by previous passes.")
            k = axes_size(in_axes, mesh)
            s_in, s_out = g_in[i] // k, g_out[i] // k
            shards = sorted({shard_index(d, mesh, in_axes) for d in range(n)})
            far = next((s for s in shards if _pad_reads_other_shards(g_in[i], low[i], interior[i], s_in, s_out, s)),
                       None)
            if far is not None:
                raise self.error(op, f"dimension {i} is sharded and the pad moves elements across shards (shard "
                                     f"{far} of the result needs elements of another shard of the operand). This "
                                     "requires device communication which should have been handled by previous "
                                     "passes.")
            row = [shard_index(d, mesh, in_axes) * s_in * (interior[i] + 1) + low[i]
                   - shard_index(d, mesh, out_axes) * s_out for d in range(n)]
            offsets.append(row)
            uniform.append(all(o == row[0] for o in row))
        local_in = shape_of(x)
        local_out = tuple(ir.RankedTensorType(self.local_type_of(res, op)).shape)
        b = self.builder(op)
        expanded = [(m - 1) * (it + 1) + 1 for m, it in zip(local_in, interior)]
        if all(uniform):
            lo = [row[0] for row in offsets]
            hi = [lo_out - (e + l) for lo_out, e, l in zip(local_out, expanded, lo)]
            self.finish(op, [b.pad(x, pad_value, lo, hi, interior, local_out)])
            return
        k_low = [max(0, max(row)) for row in offsets]
        k_high = [max(0, lo_out - min(row) - e) for row, lo_out, e in zip(offsets, local_out, expanded)]
        safe_shape = [l + e + h for l, e, h in zip(k_low, expanded, k_high)]
        safe = b.pad(x, pad_value, k_low, k_high, interior, safe_shape)
        device = self.device_id(b)
        starts = []
        for i in range(rank):
            table = [k_low[i] - o for o in offsets[i]]
            if uniform[i]:
                starts.append(b.scalar(table[0], i64()))
            else:
                starts.append(b.table_lookup(table, device))
        self.finish(op, [b.dynamic_slice(safe, starts, local_out)])

    def convert_slice(self, op) -> None:
        x, res = op.operands[0], op.results[0]
        ins, outs = self.sharding(x), self.sharding(res)
        if irs.is_replicated(ins) and irs.is_replicated(outs):
            self.convert_generic(op)
            return
        g_in = self.global_shape(x)
        g_out = self.global_shape(res)
        starts = list(ir.DenseI64ArrayAttr(op.attributes["start_indices"]))
        limits = list(ir.DenseI64ArrayAttr(op.attributes["limit_indices"]))
        strides = list(ir.DenseI64ArrayAttr(op.attributes["strides"]))
        local_out = tuple(ir.RankedTensorType(self.local_type_of(res, op)).shape)
        local_in = shape_of(x)
        new_starts, new_limits = [], []
        for i in range(len(g_in)):
            in_axes = ins.dims[i].axes if ins is not None else ()
            out_axes = outs.dims[i].axes if outs is not None else ()
            if in_axes != out_axes:
                raise self.error(op, f"dimension {i} has mismatched sharding axes. This requires a reshard "
                                     "which should have been handled by previous passes.")
            if not in_axes:
                new_starts.append(starts[i])
                new_limits.append(limits[i])
                continue
            mesh = self.mesh(ins, op)
            k = axes_size(in_axes, mesh)
            free = k <= 1 or (starts[i] == 0 and strides[i] == 1 and -(-g_in[i] // k) == -(-g_out[i] // k))
            if starts[i] != 0 or (limits[i] != g_in[i] and not free):
                raise self.error(op, f"dimension {i} is sharded but the slice is not a full slice and "
                                     "requires device communication.")
            new_starts.append(0)
            new_limits.append(local_in[i] if limits[i] == g_in[i] else local_out[i])
        op.attributes["start_indices"] = dense_i64_array(new_starts)
        op.attributes["limit_indices"] = dense_i64_array(new_limits)
        self.localize(res, op)
        self.drop_sharding(op)

    def convert_dynamic_slice(self, op) -> None:
        x, res = op.operands[0], op.results[0]
        self._check_dynamic_window(op, [x, res], self.global_shape(res))
        self.convert_generic(op)
        op.attributes["slice_sizes"] = dense_i64_array(shape_of(res))

    def convert_dynamic_update_slice(self, op) -> None:
        x, update, res = op.operands[0], op.operands[1], op.results[0]
        self._check_dynamic_window(op, [x, update, res], self.global_shape(update))
        self.convert_generic(op)

    def _check_dynamic_window(self, op, values, window) -> None:
        """A dimension the window covers whole may stay sharded, alike on every
        value: its start index clamps to 0 on the global and on the local
        shapes alike, so the local op reads or writes this device's shard. A
        dimension the window cuts must be replicated: where the window falls
        is known only at run time (insert-explicit-reshards replicates it)."""
        g_shape = self.global_shape(values[0])
        for d, size in enumerate(window):
            axes = [self._dim_axes(v, d, op) for v in values]
            if size == g_shape[d]:
                if any(a != axes[0] for a in axes):
                    raise self.error(op, f"dimension {d} has mismatched sharding axes. This requires a reshard "
                                         "which should have been handled by previous passes.")
            elif any(axes):
                raise self.error(op, f"dimension {d} is sharded but the {op.name} window of size {size} cuts it "
                                     f"at a dynamic offset (of {g_shape[d]}): it must be replicated by previous "
                                     "passes.")

    def _dim_axes(self, value, dim: int, op) -> tuple:
        """The axes sharding `value`'s dimension `dim`, none when they are of size 1."""
        s = self.sharding(value)
        if s is None or not s.dims[dim].axes or axes_size(s.dims[dim].axes, self.mesh(s, op)) <= 1:
            return ()
        return tuple(s.dims[dim].axes)

    def convert_reduce_window(self, op) -> None:
        self._check_windowed(op)
        self.convert_generic(op)

    def convert_select_and_scatter(self, op) -> None:
        self._check_windowed(op)
        self.convert_generic(op)

    def _check_windowed(self, op) -> None:
        x = op.operands[0]
        s = self.sharding(x)
        if irs.is_replicated(s):
            return
        mesh = self.mesh(s, op)
        rank = len(self.global_shape(x))
        attrs = op.attributes
        window = list(ir.DenseI64ArrayAttr(attrs["window_dimensions"])) if "window_dimensions" in attrs else []
        strides = list(ir.DenseI64ArrayAttr(attrs["window_strides"])) if "window_strides" in attrs else []
        padding = np.array(attrs["padding"]).reshape(-1, 2) if "padding" in attrs else np.zeros((rank, 2), int)
        for d in range(rank):
            if axes_size(s.dims[d].axes, mesh) <= 1:
                continue
            ok = not padding[d].any()
            w = window[d] if window else 1
            st = strides[d] if strides else 1
            ok = ok and (st == 1 or st >= w) and (w == 1 or st >= w)
            if not ok:
                raise self.error(op, f"In op {op.name} dimension {d} is sharded but is not a pass-through dimension.")

    def convert_gather(self, op) -> None:
        operand, indices = op.operands[0], op.operands[1]
        s = self.sharding(operand)
        if irs.is_replicated(s):
            self.convert_generic(op)
            return
        mesh = self.mesh(s, op)
        dn = shlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
        g_shape = self.global_shape(operand)
        sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
        batching = list(dn.operand_batching_dims)
        trivial, whole, other = _sharded_window_dims(s, mesh, g_shape, sizes, batching)
        for i in other + [i for i in whole if sizes[i] % axes_size(s.dims[i].axes, mesh)]:
            raise self.error(op, f"gather slice of operand dimension {i} must cover the whole sharded dimension")
        local_sizes = list(sizes)
        for i in whole:
            local_sizes[i] //= axes_size(s.dims[i].axes, mesh)
        res = op.results[0]
        op.attributes["slice_sizes"] = dense_i64_array(local_sizes)
        self.localize(res, op)
        if not trivial:
            return
        b = self.builder(op)
        index_map = list(dn.start_index_map)
        adjusted, mask = self.local_indices_and_mask(b, indices, mesh, s, g_shape, shape_of(operand),
                                                     index_map, dn.index_vector_dim, trivial, clamp=True)
        op.operands[1] = adjusted
        after = self.builder(op, after=True)
        ivd = dn.index_vector_dim
        mshape = shape_of(mask)
        if mshape and ivd < len(mshape):
            mask = after.reduce(mask, after.scalar(1, ir.IntegerType.get_signless(1)), [ivd], "and")
            mshape = shape_of(mask)
        rshape = shape_of(res)
        offset_dims = list(dn.offset_dims)
        bdims = [] if not mshape else [i for i in range(len(rshape)) if i not in offset_dims]
        bmask = after.broadcast(mask, rshape, bdims, ir.IntegerType.get_signless(1))
        zero = after.constant(zeros(ir.RankedTensorType(res.type)))
        selected = after.select(bmask, res, zero)
        res.replace_all_uses_except(selected, selected.owner.operation)
        self.global_types[selected] = self.global_type(res)
        self.shardings[selected] = self.sharding(res)

    def local_indices_and_mask(self, b: Builder, indices, mesh, s: TensorSharding, g_shape, l_shape,
                               index_map, ivd, trivial, clamp: bool, mask: bool = True):
        """Indices made local to this device's shard of the sharded indexed dims,
        and (optionally) the mask of indices this shard holds."""
        et = element_of(indices)
        out_mask = None
        if any(d in index_map for d in trivial):
            base = indices
            if clamp:
                lo = self._indices_like(b, indices, ivd, [0])
                hi = self._indices_like(b, indices, ivd, [g_shape[d] - 1 for d in index_map])
                base = b.clamp(lo, indices, hi)
            mins, maxs = [], []
            for d in index_map:
                if d not in trivial:
                    mins.append(b.scalar(0, et))
                    maxs.append(b.scalar(g_shape[d] - 1, et))
                    continue
                off = b.convert(self.offset(b, mesh, s.dims[d].axes, l_shape[d]), et)
                mins.append(off)
                if mask:
                    maxs.append(b.binary("add", off, b.scalar(l_shape[d] - 1, et)))
            lo_t = self._bounds_tensor(b, mins, indices, ivd)
            hi_t = self._bounds_tensor(b, maxs, indices, ivd) if mask else None
            adjusted = b.binary("subtract", base, lo_t)
            if mask:
                out_mask = b.binary("and", b.compare(base, lo_t, "GE"), b.compare(base, hi_t, "LE"))
        else:
            adjusted = indices
        if not mask:
            return adjusted, None
        part = None
        for d in trivial:
            if d in index_map:
                continue
            off = self.offset(b, mesh, s.dims[d].axes, l_shape[d])
            eq = b.compare(off, b.scalar(0, i64()), "EQ")
            part = eq if part is None else b.binary("and", part, eq)
        if part is not None:
            if out_mask is not None:
                part = b.broadcast(part, shape_of(out_mask), [])
                out_mask = b.binary("and", out_mask, part)
            else:
                out_mask = part
        return adjusted, out_mask

    def _indices_like(self, b: Builder, indices, ivd, values):
        shape = shape_of(indices)
        et = element_of(indices)
        if ivd < len(shape) and len(values) > 1:
            arr = np.asarray(values, dtype=np.int64)
            c = b.constant(ir.DenseElementsAttr.get(arr.astype(_np_int(et)), type=tensor(arr.shape, et)))
            return b.broadcast(c, shape, [ivd])
        return b.constant(ir.DenseElementsAttr.get_splat(indices.type, ir.IntegerAttr.get(et, int(values[0]))))

    def _bounds_tensor(self, b: Builder, bounds, indices, ivd):
        shape = shape_of(indices)
        if ivd >= len(shape) or shape[ivd] == 1:
            return b.broadcast(bounds[0], shape, [])
        parts = [b.reshape(v, (1,)) for v in bounds]
        return b.broadcast(b.concatenate(parts, 0), shape, [ivd])

    def convert_scatter(self, op) -> None:
        n = (len(op.operands) - 1) // 2
        inputs, indices, updates = list(op.operands[:n]), op.operands[n], list(op.operands[n + 1:])
        ins, ups = self.sharding(inputs[0]), self.sharding(updates[0])
        if irs.is_replicated(ins) and irs.is_replicated(ups):
            self.convert_generic(op)
            return
        mesh = self.mesh(ins if ins is not None else ups, op)
        dn = shlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
        window_dims = list(dn.update_window_dims)
        reduction = []
        if not irs.is_replicated(ups):
            used = {a for d in (ins.dims if ins is not None else ()) for a in d.axes}
            for i, d in enumerate(ups.dims):
                if i in window_dims:
                    continue
                reduction += [a for a in d.axes if a not in used]
        if not reduction and irs.is_replicated(ins):
            self.convert_generic(op)
            return
        b = self.builder(op)
        local_in = shape_of(inputs[0])
        if reduction:
            kind = _scatter_kind(op, n)
            if kind is None:
                raise self.error(op, "failed to get scatter reduction identity.")
            # Only one device of each group along the reduction axes keeps the
            # operand; the others start from the identity, so the all_reduce
            # after the scatter counts the operand once.
            identity = b.constant(identity_attr(kind, element_of(inputs[0])))
            device = self.device_id(b)
            leader = [shard_index(d, mesh, reduction) == 0 for d in range(mesh.num_devices)]
            is_leader = b.dynamic_slice(b.bool_table(leader), [device], [1])
            is_leader = b.broadcast(is_leader, local_in, [0] if local_in else [], ir.IntegerType.get_signless(1))
            ident = b.broadcast(identity, local_in, [])
            for k, x in enumerate(inputs):
                op.operands[k] = b.select(is_leader, x, ident)
        g_shape = self.global_shape(inputs[0])
        indexed = []
        if not irs.is_replicated(ins):
            to_operand = list(dn.scattered_dims_to_operand_dims)
            inserted = list(dn.inserted_window_dims)
            batching = list(dn.input_batching_dims)
            windows = _scatter_window_sizes(g_shape, self.global_shape(updates[0]), window_dims, inserted, batching)
            # A dimension whose window is the whole dimension keeps its index
            # (only 0 updates anything, on every device alike); one whose
            # window is one element gets this shard's offset taken off.
            one, _, other = _sharded_window_dims(ins, mesh, g_shape, windows, batching)
            for i in other:
                raise self.error(op, f"scatter window of operand dimension {i} must be one element or cover "
                                     "the whole sharded dimension")
            for i in one:
                if i in to_operand:
                    indexed.append(i)
                elif i in inserted:
                    raise self.error(op, f"sharding operand dimension {i} that is not indexed but in inserted "
                                         "window dimension is not supported.")
        if indexed:
            adjusted, _ = self.local_indices_and_mask(b, indices, mesh, ins, g_shape, local_in,
                                                      list(dn.scattered_dims_to_operand_dims),
                                                      dn.index_vector_dim, indexed, clamp=False, mask=False)
            op.operands[n] = adjusted
        for block in (r.blocks[0] for r in op.regions):
            self.convert_block(block)
        for r in op.results:
            self.localize(r, op)


def _sharded_window_dims(s: TensorSharding, mesh: Mesh, g_shape, windows, batching) -> tuple[list, list, list]:
    """The operand dimensions of a gather or scatter sharded over more than
    one device (batching dimensions aside), by the size of the slice
    (gather) or update window (scatter) along them: (one element wide, the
    whole dimension, other). These are the sharding rule's factors
    (sdylog/oprules/indexing.py): one element wide is a collapsed or
    inserted dimension or a one-wide offset, which each device indexes
    within its shard, its index shifted by the shard's offset and a window
    out of the shard skipped (scatter) or masked (gather); the whole
    dimension is a pass-through factor, sharded alike in operand and slices,
    whose index stays as it is (only 0 is in range, and the local window
    is again the whole local dimension); any other must have been
    replicated before."""
    one, whole, other = [], [], []
    for i, size in enumerate(g_shape):
        axes = s.dims[i].axes
        if not axes or i in batching or axes_size(axes, mesh) <= 1:
            continue
        if windows[i] == 1:
            one.append(i)
        elif windows[i] == size:
            whole.append(i)
        else:
            other.append(i)
    return one, whole, other


def _scatter_window_sizes(g_shape, update_shape, update_window_dims, inserted, batching) -> list[int]:
    """The size of a scatter's update window along each operand dimension:
    1 on inserted and batching dimensions, the update's window dimensions
    in order on the others."""
    window = iter(update_shape[d] for d in update_window_dims)
    return [1 if i in inserted or i in batching else next(window) for i in range(len(g_shape))]


def _pad_reads_other_shards(n_in: int, low: int, interior: int, s_in: int, s_out: int, k: int) -> bool:
    """Whether block `k` (of size s_out) of a pad's result, on one dimension,
    holds operand elements outside the operand's block `k` (of size s_in): a
    local pad cannot make it (operand element j lands at low + j * (interior + 1))."""
    step = interior + 1
    start, end = k * s_out, (k + 1) * s_out
    first = max(0, -(-(start - low) // step))
    last = min(n_in - 1, (end - 1 - low) // step)
    return first <= last and (first < k * s_in or last >= (k + 1) * s_in)


_UNREAD = object()   # (a value whose sharding was not read yet: None is "no sharding")


def _np_int(et):
    return {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[ir.IntegerType(et).width]


_SCATTER_KINDS = {"stablehlo.add": "add", "stablehlo.multiply": "multiply", "stablehlo.maximum": "maximum",
                  "stablehlo.minimum": "minimum", "stablehlo.and": "and", "stablehlo.or": "or"}


def _scatter_kind(op, n: int) -> str | None:
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    ret = ops[-1]
    kinds = set()
    for v in ret.operands:
        owner = v.owner
        owner = owner.operation if hasattr(owner, "operation") else owner
        if not hasattr(owner, "name") or owner.name not in _SCATTER_KINDS or len(owner.operands) != 2:
            return None
        kinds.add(_SCATTER_KINDS[owner.name])
    return kinds.pop() if len(kinds) == 1 else None
