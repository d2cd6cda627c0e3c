"""Facts of an explicit program (after reshards and collectives are in the IR)
for the partitioner's rules (rules/partition/*.dl).

The relations are those of rules/schema.dl, read as the partitioner passes
see a value's sharding: the `out_sharding` of a collective, the `sharding`
of a reshard, the in-shardings of a manual computation's body (manual axes
removed) count as the value's sharding (`ir_shardings.sharding_of`), which
propagation's extractor (sdylog/facts/extract.py) leaves out: before
propagation a collective's out_sharding is no sharding to propagate. Besides
those, rules/partition/schema.dl declares what only the partitioner asks
(the module's mesh order, tensor-typed values, op attributes a pass hands
in). A walk of plain Python, in program order: the passes run it once per
module, on programs a fraction of propagation's size.

The FactSet keeps the ids' way back to the IR (ops, values) for the pass
that rewrites from the rules' answers.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from sdylog import RULES_DIR
from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.types import num_elements
from sdylog.facts.extract import add_mesh_rows, add_sharding_rows
from sdylog.ir.walk import walk_ops
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.sharding import TensorSharding
from sdylog.partition import ir_shardings as irs


@dataclass
class ExplicitFacts:
    relations: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))
    ops: list = field(default_factory=list)        # op id -> ir.Operation
    values: list = field(default_factory=list)     # value id -> ir.Value
    value_ids: dict = field(default_factory=dict)  # ir.Value -> value id
    op_ids: dict = field(default_factory=dict)     # ir.Operation -> op id
    funcs: dict = field(default_factory=dict)      # func name -> func.func op
    meshes: dict[str, Mesh] = field(default_factory=dict)
    _shardings: dict = field(default_factory=dict)  # TensorSharding -> sharding id
    _type_ids: dict = field(default_factory=dict)   # ir.RankedTensorType -> type id
    reader: irs.ShardingReader = field(default_factory=irs.CachedShardingReader)

    def add(self, relation: str, *row) -> None:
        self.relations[relation].append(row)

    def rows(self, relation: str) -> list[tuple]:
        return self.relations.get(relation, [])

    # ---------------------------------------------------------------- shardings
    def mesh_name(self, mesh: str | Mesh) -> str:
        if isinstance(mesh, str):
            if mesh not in self.meshes:
                raise SdylogError(f"unknown mesh @{mesh}")
            return mesh
        for name, m in self.meshes.items():
            if name.startswith("@inline.") and m == mesh:
                return name
        name = f"@inline.{sum(n.startswith('@inline.') for n in self.meshes)}"
        self.add_mesh(name, mesh)
        return name

    def add_mesh(self, name: str, mesh: Mesh, position: int | None = None) -> None:
        """Mesh `name`, the `position`-th mesh symbol of the module (None: an inlined mesh)."""
        self.meshes[name] = mesh
        add_mesh_rows(self, name, mesh)
        if position is not None:
            self.add("mesh_position", name, position)

    def sharding_id(self, sharding: TensorSharding) -> int:
        sid = self._shardings.get(sharding)
        if sid is not None:
            return sid
        sid = self._shardings[sharding] = len(self._shardings)
        add_sharding_rows(self, sid, self.mesh_name(sharding.mesh), sharding)
        return sid

    # ---------------------------------------------------------------- values
    def type_id(self, t: ir.RankedTensorType) -> int:
        """The id of a ranked tensor type, its type_dim and type_elems rows
        added when first seen (rules/schema.dl derives value_dim and
        value_elems from them)."""
        tid = self._type_ids.get(t)
        if tid is None:
            tid = self._type_ids[t] = len(self._type_ids)
            for d, n in enumerate(t.shape):
                self.add("type_dim", tid, d, n)
            if t.has_static_shape:
                self.add("type_elems", tid, num_elements(t))
        return tid

    def value_id(self, value, func: str) -> int:
        vid = self.value_ids.get(value)
        if vid is not None:
            return vid
        vid = self.value_ids[value] = len(self.values)
        self.values.append(value)
        t = value.type
        if isinstance(t, ir.RankedTensorType):
            shape = ir.RankedTensorType(t).shape
            self.add("value", vid, func, len(shape), str(ir.RankedTensorType(t).element_type))
            self.add("ranked_tensor", vid)
            self.add("value_type", vid, self.type_id(ir.RankedTensorType(t)))
        else:
            self.add("value", vid, func, 0, str(t))
        try:
            sharding = self.reader.sharding_of(value)
        except SdylogError:
            sharding = None
        if sharding is not None:
            self.add("value_sharding", vid, self.sharding_id(sharding))
        return vid


def explicit_facts(module: ir.Module, only: list | None = None) -> ExplicitFacts:
    """Every function's ops (pre-order), values, shardings and meshes. With
    `only` (ops of the module in walk order), the rows of those ops and of
    their values only (no function's): for rules that ask about nothing but
    these ops and their own operands and results."""
    f = ExplicitFacts()
    for pos, (name, mesh) in enumerate(meshes_of_module(module).items()):
        f.add_mesh(name, mesh, pos)
    if only is not None:
        for op in only:
            fn = _func_of(op)
            _add_op(f, op, ir.StringAttr(fn.attributes["sym_name"]).value)
        return f
    for top in module.body.operations:
        fn = top.operation
        if fn.name != "func.func":
            continue
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        f.funcs[name] = fn
        f.add("func", name, int("sym_visibility" not in fn.attributes))
        if not fn.regions[0].blocks:
            continue
        for i, a in enumerate(fn.regions[0].blocks[0].arguments):
            f.add("func_arg", name, i, f.value_id(a, name))
        for i in range(len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)):
            s = f.reader.func_result_sharding(fn, i)
            if s is not None:
                f.add("func_result_sharding", name, i, f.sharding_id(s))
        for op in walk_ops(fn):
            if op != fn:
                _add_op(f, op, name)
    return f


def _add_op(f: ExplicitFacts, op, func: str) -> None:
    op_id = len(f.ops)
    f.ops.append(op)
    f.op_ids[op] = op_id
    f.add("op", op_id, op.name, func, op_id)
    parent_id = f.op_ids.get(op.parent.operation)   # (None for the function: no row)
    if parent_id is not None:
        f.add("op_in", op_id, parent_id, _region_index(op))
    for i, v in enumerate(op.operands):
        f.add("op_operand", op_id, i, f.value_id(v, func))
    for i, r in enumerate(op.results):
        f.add("op_result", op_id, i, f.value_id(r, func))
    for ri, region_ in enumerate(op.regions):
        for block in region_.blocks:
            for i, a in enumerate(block.arguments):
                f.add("block_arg", op_id, ri, i, f.value_id(a, func))
    if op.name == "func.return":
        for i, v in enumerate(op.operands):
            f.add("func_return", func, i, f.value_id(v, func))


def _func_of(op):
    """The function an op is nested in."""
    while op.name != "func.func":
        op = op.parent.operation
    return op


def _region_index(op) -> int:
    block = op.block
    parent = op.parent.operation
    for i, region in enumerate(parent.regions):
        for b in region.blocks:
            if b == block:
                return i
    return 0


def partition_program(name: str):
    """The rule program rules/partition/NAME.dl (parsed once per process)."""
    from sdylog.datalog.cache import rule_program
    return rule_program(str(RULES_DIR / "partition" / f"{name}.dl"))


def run_rules(name: str, facts: ExplicitFacts, extra: dict | None = None):
    """One evaluation of rules/partition/NAME.dl on the facts (and `extra`
    rows a pass adds); the engine, to read the answers from."""
    from sdylog.datalog import make_engine
    program = partition_program(name)
    eng = make_engine(program)
    inputs = set(program.inputs)   # (a row of a derived relation given here would be lost on Soufflé)
    for rel, rows in list(facts.relations.items()) + list((extra or {}).items()):
        if rel in inputs and rows:
            eng.load(rel, rows)
    eng.run()
    return eng


def add_sharding_rules(facts: ExplicitFacts, wanted) -> None:
    """The op sharding rules (rules/schema.dl's op_rule, rule_factor,
    rule_dim_factor, custom_rule; the rules derive rule_tensor) of the ops
    `wanted(op)` picks; ops with equal rules share a rule id."""
    from sdylog.oprules import RuleCache
    rules = RuleCache()   # (equal ops, equal rules: built once)
    rule_ids: dict = {}
    for op_id, op in enumerate(facts.ops):
        if not wanted(op):
            continue
        rule = rules.rule(op)
        if rule is None:
            continue
        rid = rule_ids.get(rule)
        if rid is None:
            rid = rule_ids[rule] = len(rule_ids)
            for fac, size in enumerate(rule.factor_sizes):
                facts.add("rule_factor", rid, fac, size, rule.kind(fac).value)
            for t, (_, _, mapping) in enumerate(rule.tensors()):
                for d, factors in enumerate(mapping):
                    for pos, fac in enumerate(factors):
                        facts.add("rule_dim_factor", rid, t, d, pos, fac)
            if rule.is_custom:
                facts.add("custom_rule", rid)
        facts.add("op_rule", op_id, rid)


def add_slice_and_pad_attributes(facts: ExplicitFacts) -> None:
    """pad_edges and slice_window rows (rules/partition/schema.dl) of the
    module's stablehlo.pad and stablehlo.slice ops."""
    for op_id, op in enumerate(facts.ops):
        if op.name == "stablehlo.pad":
            keys = ("edge_padding_low", "edge_padding_high", "interior_padding")
        elif op.name == "stablehlo.slice":
            keys = ("start_indices", "limit_indices", "strides")
        else:
            continue
        relation = "pad_edges" if op.name == "stablehlo.pad" else "slice_window"
        columns = zip(*(ir.DenseI64ArrayAttr(op.attributes[k]) for k in keys))
        for d, row in enumerate(columns):
            facts.add(relation, op_id, d, *row)


def add_conv_windows(facts: ExplicitFacts) -> None:
    """conv_window rows (rules/partition/schema.dl) of the module's convolutions."""
    from jaxlib.mlir.dialects import stablehlo as shlo
    from sdylog.oprules.common import conv_window
    for op_id, op in enumerate(facts.ops):
        if op.name != "stablehlo.convolution":
            continue
        dn = shlo.ConvDimensionNumbers(op.attributes["dimension_numbers"])
        strides, lhs_dil, rhs_dil, padding = conv_window(op, len(dn.input_spatial_dimensions))
        for k, (od, ld, rd) in enumerate(zip(dn.output_spatial_dimensions, dn.input_spatial_dimensions,
                                            dn.kernel_spatial_dimensions)):
            facts.add("conv_window", op_id, od, ld, rd, strides[k], padding[k][0], padding[k][1], lhs_dil[k],
                      rhs_dil[k])
