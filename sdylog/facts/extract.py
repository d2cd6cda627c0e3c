"""Walk a module once and emit the input relations of rules/schema.dl.

The FactSet also keeps the way back from ids to IR objects (ops, values), so
the back end can write derived shardings into the module.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.diagnostics import error_at
from sdylog.ir.walk import func_ops, is_tensor, shape_of, symbol_name
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh, meshes_of_module
from sdylog.model.rule import FactorKind
from sdylog.model.sharding import TensorSharding, sharding_per_value
from sdylog.oprules import rule_for_op

# Ops whose results carry data unchanged from their operands / regions:
# they get data-flow edges instead of a sharding rule.
_FLOW_OPS = {"stablehlo.while", "stablehlo.case", "stablehlo.if", "stablehlo.optimization_barrier",
             "func.call", "sdy.named_computation", "sdy.manual_computation"}


@dataclass
class FactSet:
    relations: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))
    ops: list = field(default_factory=list)        # op id -> ir.Operation
    values: list = field(default_factory=list)     # value id -> ir.Value
    value_ids: dict = field(default_factory=dict)  # ir.Value -> value id
    meshes: dict[str, Mesh] = field(default_factory=dict)
    module: ir.Module | None = None  # keeps the IR that `ops` and `values` point into alive

    def add(self, relation: str, *row) -> None:
        self.relations[relation].append(row)

    def rows(self, relation: str) -> list[tuple]:
        return self.relations.get(relation, [])


class _Extractor:
    def __init__(self, module: ir.Module, filename: str, conservative: bool):
        self.facts = FactSet(module=module)
        self.filename = filename
        self.conservative = conservative
        self.module = module
        self._inline_meshes: dict[Mesh, str] = {}
        self._num_shardings = 0
        self._num_edges = 0
        self._rule_by_key: dict[tuple, int | None] = {}
        self._rule_ids: dict = {}  # OpShardingRule -> rule id

    # ------------------------------------------------------------ ids
    def value_id(self, value, func: str) -> int:
        f = self.facts
        vid = f.value_ids.get(value)
        if vid is None:
            vid = len(f.values)
            f.value_ids[value] = vid
            f.values.append(value)
            shape = shape_of(value)
            f.add("value", vid, func, len(shape), str(value.type.element_type) if is_tensor(value) else str(value.type))
            for d, size in enumerate(shape):
                f.add("value_dim", vid, d, size)
        return vid

    def mesh_name(self, mesh: str | Mesh) -> str:
        if isinstance(mesh, str):
            if mesh not in self.facts.meshes:
                raise error_at(self.module.operation, f"unknown mesh @{mesh}", self.filename)
            return mesh
        name = self._inline_meshes.get(mesh)
        if name is None:
            name = f"@inline.{len(self._inline_meshes)}"
            self._inline_meshes[mesh] = name
            self.add_mesh(name, mesh)
        return name

    # ------------------------------------------------------------ meshes
    def add_mesh(self, name: str, mesh: Mesh) -> None:
        f = self.facts
        f.meshes[name] = mesh
        f.add("mesh", name, mesh.num_devices if mesh.axes else len(mesh.device_ids))
        for i, a in enumerate(mesh.axes):
            f.add("mesh_axis", name, a.name, i, a.size)
        if mesh.is_maximal:
            f.add("maximal_mesh", name, mesh.device_ids[0])
        elif mesh.device_ids:
            for pos, dev in enumerate(mesh.device_ids):
                f.add("mesh_device", name, pos, dev)

    # ------------------------------------------------------------ shardings
    def add_sharding(self, sharding: TensorSharding) -> int:
        f = self.facts
        sid = self._num_shardings
        self._num_shardings += 1
        mesh = self.mesh_name(sharding.mesh)
        sizes = f.meshes[mesh].axis_sizes
        f.add("sharding", sid, mesh)

        def ref(a: AxisRef):
            lo, hi = a.interval(sizes.get(a.name, 1))
            return a.name, lo, hi // lo

        for d, dim in enumerate(sharding.dims):
            f.add("sharding_dim", sid, d, int(dim.is_closed), -1 if dim.priority is None else dim.priority)
            for pos, a in enumerate(dim.axes):
                f.add("sharding_dim_axis", sid, d, pos, *ref(a))
        for a in sharding.replicated:
            f.add("sharding_replicated", sid, *ref(a))
        for a in sharding.unreduced:
            f.add("sharding_unreduced", sid, *ref(a))
        return sid

    # ------------------------------------------------------------ edges
    def add_edge(self, owner: int, kind: str, op_id: int, sources, targets) -> None:
        f = self.facts
        e = self._num_edges
        self._num_edges += 1
        f.add("flow_edge", e, owner, kind, op_id)
        for v in sources:
            f.add("flow_source", e, v)
        for v in targets:
            f.add("flow_target", e, v)

    # ------------------------------------------------------------ walk
    def run(self) -> FactSet:
        f = self.facts
        for name, mesh in meshes_of_module(self.module).items():
            self.add_mesh(name, mesh)
        funcs = func_ops(self.module)
        self.returns = {}
        for fn in funcs:
            self.add_func(fn)
        self.add_call_edges()
        return f

    def add_func(self, fn) -> None:
        f = self.facts
        name = symbol_name(fn)
        vis = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
        f.add("func", name, int(vis is None or ir.StringAttr(vis).value == "public"))
        op_id = self.add_op_row(fn.operation, name, -1, -1)
        block = fn.regions[0].blocks[0]
        arg_attrs = ir.ArrayAttr(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else None
        for i, arg in enumerate(block.arguments):
            vid = self.value_id(arg, name)
            f.add("func_arg", name, i, vid)
            f.add("block_arg", op_id, 0, i, vid)
            if arg_attrs is not None:
                d = ir.DictAttr(arg_attrs[i])
                if "sdy.sharding" in d:
                    f.add("value_sharding", vid, self.add_sharding(TensorSharding.from_attr(d["sdy.sharding"])))
        if "res_attrs" in fn.attributes:
            for i, a in enumerate(ir.ArrayAttr(fn.attributes["res_attrs"])):
                d = ir.DictAttr(a)
                if "sdy.sharding" in d:
                    f.add("func_result_sharding", name, i, self.add_sharding(TensorSharding.from_attr(d["sdy.sharding"])))
        self.add_block(block, name, op_id, 0)
        term = block.operations[len(block.operations) - 1]
        rets = [self.value_id(v, name) for v in term.operands]
        self.returns[name] = (op_id, block, rets)
        for i, vid in enumerate(rets):
            f.add("func_return", name, i, vid)

    def add_op_row(self, op, func: str, parent: int, region: int) -> int:
        f = self.facts
        op_id = len(f.ops)
        f.ops.append(op)
        f.add("op", op_id, op.name, func, parent, region, op_id)
        return op_id

    def add_block(self, block, func: str, parent: int, region: int) -> None:
        for op in block.operations:
            self.add_op(op.operation, func, parent, region)

    def add_op(self, op, func: str, parent: int, region: int) -> None:
        f = self.facts
        op_id = self.add_op_row(op, func, parent, region)
        operands = [self.value_id(v, func) for v in op.operands]
        for i, v in enumerate(operands):
            f.add("op_operand", op_id, i, v)
        results = [self.value_id(v, func) for v in op.results]
        for i, v in enumerate(results):
            f.add("op_result", op_id, i, v)
        args, yields = defaultdict(dict), defaultdict(dict)  # region -> index -> value
        for r, reg in enumerate(op.regions):
            for block in reg.blocks:
                for i, arg in enumerate(block.arguments):
                    args[r][i] = self.value_id(arg, func)
                    f.add("block_arg", op_id, r, i, args[r][i])
                self.add_block(block, func, op_id, r)
                if len(block.operations):
                    term = block.operations[len(block.operations) - 1]
                    for i, v in enumerate(term.operands):
                        yields[r][i] = self.value_id(v, func)
                        f.add("region_yield", op_id, r, i, yields[r][i])
        self.add_op_shardings(op, op_id, results)
        self.add_op_kind_facts(op, op_id, operands, results)
        if op.name in _FLOW_OPS and op.name != "func.call":
            self.add_region_edges(op.name, op_id, operands, results, args, yields)
        if op.name not in _FLOW_OPS:
            self.add_rule(op, op_id, operands, results)

    def add_op_shardings(self, op, op_id: int, results: list[int]) -> None:
        f = self.facts
        attrs = op.attributes
        if "sdy.sharding" in attrs:
            shardings = sharding_per_value(attrs["sdy.sharding"])
            if len(shardings) != len(results):
                raise error_at(op, f"sdy.sharding has {len(shardings)} shardings for {len(results)} results", self.filename)
            for vid, s in zip(results, shardings):
                f.add("value_sharding", vid, self.add_sharding(s))
        if op.name in ("sdy.sharding_constraint", "sdy.reshard", "sdy.data_flow_edge") and "sharding" in attrs:
            f.add("value_sharding", results[0], self.add_sharding(TensorSharding.from_attr(attrs["sharding"])))

    def add_op_kind_facts(self, op, op_id: int, operands: list[int], results: list[int]) -> None:
        f = self.facts
        name = op.name
        attrs = op.attributes
        if name == "sdy.sharding_constraint":
            f.add("sharding_constraint", op_id)
        elif name == "sdy.sharding_group":
            f.add("sharding_group", operands[0], ir.IntegerAttr(attrs["group_id"]).value)
        elif name == "sdy.propagation_barrier":
            f.add("propagation_barrier", op_id, str(attrs["allowed_direction"]).split("<")[-1].rstrip(">").upper())
        elif name == "func.call":
            f.add("call", op_id, ir.FlatSymbolRefAttr(attrs["callee"]).value)
        elif name == "sdy.manual_computation":
            for i, s in enumerate(sharding_per_value(attrs["in_shardings"])):
                f.add("manual_in_sharding", op_id, i, self.add_sharding(s))
            for i, s in enumerate(sharding_per_value(attrs["out_shardings"])):
                f.add("manual_out_sharding", op_id, i, self.add_sharding(s))
            manual = sdy.ManualAxesAttr(attrs["manual_axes"])
            for i in range(len(manual)):
                f.add("manual_axis", op_id, manual[i])

    def add_region_edges(self, kind: str, op_id: int, operands, results, args, yields) -> None:
        """Edges of region-holding data-flow ops; func calls are done once all functions are known."""
        for i, res in enumerate(results):
            if kind == "stablehlo.while":
                self.add_edge(res, kind, op_id, [operands[i], yields[1].get(i)],
                              [res, args[0].get(i), args[1].get(i)])
            elif kind in ("stablehlo.case", "stablehlo.if"):
                self.add_edge(res, kind, op_id, [yields[r][i] for r in yields], [res])
            elif kind == "stablehlo.optimization_barrier":
                self.add_edge(res, kind, op_id, [operands[i]], [res])
            else:  # named / manual computation: the body's yield flows out
                self.add_edge(res, kind, op_id, [yields[0].get(i)], [res])
        if kind in ("sdy.named_computation", "sdy.manual_computation"):
            for i, v in enumerate(operands):
                self.add_edge(args[0][i], kind, op_id, [v], [args[0][i]])

    def add_call_edges(self) -> None:
        f = self.facts
        calls = {row[0]: row[1] for row in f.rows("call")}
        operands = defaultdict(dict)
        for op, i, v in f.rows("op_operand"):
            if op in calls:
                operands[op][i] = v
        results = defaultdict(dict)
        for op, i, v in f.rows("op_result"):
            if op in calls:
                results[op][i] = v
        args = defaultdict(dict)
        for fn, i, v in f.rows("func_arg"):
            args[fn][i] = v
        for op, callee in calls.items():
            if callee not in self.returns:
                raise error_at(f.ops[op], f"call to unknown function @{callee}", self.filename)
            rets = self.returns[callee][2]
            for i, res in results[op].items():
                self.add_edge(res, "func.call", op, [rets[i]], [res])
            for i, v in operands[op].items():
                self.add_edge(args[callee][i], "func.call", op, [v], [args[callee][i]])

    def add_rule(self, op, op_id: int, operands: list[int], results: list[int]) -> None:
        rule_id = self.rule_id(op)
        if rule_id is None:
            return
        f = self.facts
        f.add("op_rule", op_id, rule_id)
        values = operands + results
        n_ops = len(operands)
        for t, v in enumerate(values):
            f.add("rule_tensor", op_id, t, v, int(t >= n_ops))

    def rule_id(self, op) -> int | None:
        """The id of the op's sharding rule; equal rules share one id and one set of facts.

        A rule depends only on the op's name, types and attributes, all uniqued
        by MLIR, so that tuple is the memo key (8.4k ops of a transformer have ~100).
        """
        attrs = op.attributes
        key = (op.name, tuple(v.type for v in op.operands), tuple(v.type for v in op.results),
               tuple((attrs[i].name, attrs[i].attr) for i in range(len(attrs))))
        if key in self._rule_by_key:
            return self._rule_by_key[key]
        rule = rule_for_op(op, conservative=self.conservative, filename=self.filename)
        rule_id = None
        if rule is not None:
            rule_id = self._rule_ids.get(rule)
            if rule_id is None:
                rule_id = self._rule_ids[rule] = len(self._rule_ids)
                self.add_rule_facts(rule_id, rule)
        self._rule_by_key[key] = rule_id
        return rule_id

    def add_rule_facts(self, rule_id: int, rule) -> None:
        f = self.facts
        for fac, size in enumerate(rule.factor_sizes):
            f.add("rule_factor", rule_id, fac, size, rule.kind(fac).value)
            if rule.is_blocked(fac):
                f.add("rule_blocked_factor", rule_id, fac)
        for t, (_, _, mapping) in enumerate(rule.tensors()):
            for d, factors in enumerate(mapping):
                for pos, fac in enumerate(factors):
                    f.add("rule_dim_factor", rule_id, t, d, pos, fac)
        if rule.is_custom:
            f.add("custom_rule", rule_id)


def extract_facts(module: ir.Module, filename: str = "-", conservative: bool = False) -> FactSet:
    """The module's input relations (rules/schema.dl) and the id maps back to the IR."""
    with module.context:
        return _Extractor(module, filename, conservative).run()


assert FactorKind.PASS_THROUGH.value == "pass_through"  # the kind names the rules match on
