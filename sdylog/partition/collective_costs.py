"""Reshards and collectives as the facts of rules/collectives.dl, and one
evaluation of those rules for their costs (bytes one device sends, ring
model) and checks.

Reshards are rows of the input relations the rules' header documents
(`reshard`, `reshard_dim`, `reshard_from_axis`, `reshard_to_axis`,
`reshard_target_mesh`), whoever makes them: `reshard_facts` from Reshard
objects, or another program's derived relations. `decomposition_facts`
reads such rows (and schema.dl's `mesh_axis` rows of their meshes), plans
each reshard (reshard_steps.py) and returns the collective rows;
`evaluate` runs the rules once over all of them. `module_collectives`
costs every collective of a module (a partitioned program) the same way.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from jaxlib.mlir import ir

from sdylog import RULES_DIR
from sdylog.ir.collectives import AXES_ATTRIBUTE, axes_text
from sdylog.ir.diagnostics import format_location
from sdylog.ir.shardings import COLLECTIVE_OPS, Meshes, get_sharding
from sdylog.ir.types import element_bytes, shape_of
from sdylog.ir.walk import walk_ops
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.sharding import TensorSharding
from sdylog.partition.ir_shardings import all_to_all_params, axis_ref_list, axis_ref_lists
from sdylog.partition.reshard_steps import ALL_TO_ALL, Collective, plan_reshard

RULES_FILE = RULES_DIR / "collectives.dl"

Dims = tuple[tuple[AxisRef, ...], ...]


@dataclass(frozen=True)
class Reshard:
    """A reshard of a tensor from one sharding's dimension axes to another's
    on a mesh (`axis_sizes`: the mesh's axes in order, (name, size) pairs)."""
    id: int
    mesh: str
    axis_sizes: tuple[tuple[str, int], ...]
    shape: tuple[int, ...]
    elem_bytes: int
    source: Dims
    target: Dims
    target_mesh: str | None = None   # the target's mesh, when another device order

    def plan(self) -> list[Collective]:
        return plan_reshard(self.source, self.target, self.shape, dict(self.axis_sizes),
                            reorders_devices=self.target_mesh is not None)


# --- rows --------------------------------------------------------------------------------
def axis_row(axis: AxisRef, axis_sizes: dict[str, int]) -> tuple[str, int, int]:
    """(axis, pre_size, size) as the rules write an axis ref."""
    return axis.name, axis.pre_size, axis.size(axis_sizes[axis.name])


def axis_of_row(name: str, pre: int, size: int, axis_sizes: dict[str, int]) -> AxisRef:
    if pre == 1 and size == axis_sizes[name]:
        return AxisRef(name)
    return AxisRef(name, SubAxis(pre, size))


def _dim_rows(key, dims: Dims, axis_sizes) -> list[tuple]:
    return [(key, d, p, *axis_row(a, axis_sizes)) for d, axes in enumerate(dims) for p, a in enumerate(axes)]


def reshard_facts(reshards) -> dict[str, list[tuple]]:
    """The rows of the reshard input relations (and schema.dl's `mesh_axis`
    rows of their meshes, which the decomposition reads)."""
    rows: dict[str, list[tuple]] = defaultdict(list)
    meshes = {}
    for r in reshards:
        sizes = dict(r.axis_sizes)
        meshes[r.mesh] = r.axis_sizes
        rows["reshard"].append((r.id, r.mesh, r.elem_bytes))
        rows["reshard_dim"] += [(r.id, d, n) for d, n in enumerate(r.shape)]
        rows["reshard_from_axis"] += _dim_rows(r.id, r.source, sizes)
        rows["reshard_to_axis"] += _dim_rows(r.id, r.target, sizes)
        if r.target_mesh is not None:
            rows["reshard_target_mesh"].append((r.id, r.target_mesh))
    for mesh, axis_sizes in meshes.items():
        rows["mesh_axis"] += [(mesh, name, i, size) for i, (name, size) in enumerate(axis_sizes)]
    return dict(rows)


def reshards_of_facts(rows: dict[str, list[tuple]]) -> list[Reshard]:
    """The Reshard objects the reshard rows (and `mesh_axis` rows) describe."""
    mesh_axes = defaultdict(list)
    for mesh, name, index, size in rows.get("mesh_axis", ()):
        mesh_axes[mesh].append((index, name, size))
    shapes, sources, targets = defaultdict(dict), defaultdict(dict), defaultdict(dict)
    for r, d, n in rows.get("reshard_dim", ()):
        shapes[r][d] = n
    for relation, into in (("reshard_from_axis", sources), ("reshard_to_axis", targets)):
        for r, d, p, name, pre, size in rows.get(relation, ()):
            into[r].setdefault(d, {})[p] = (name, pre, size)
    target_mesh = dict(rows.get("reshard_target_mesh", ()))
    out = []
    for r, mesh, elem_bytes in sorted(rows.get("reshard", ())):
        axis_sizes = tuple((name, size) for _, name, size in sorted(mesh_axes[mesh]))
        sizes = dict(axis_sizes)
        rank = len(shapes[r])

        def dims(of):
            return tuple(tuple(axis_of_row(*of.get(d, {})[p], sizes) for p in sorted(of.get(d, {})))
                         for d in range(rank))
        out.append(Reshard(r, mesh, axis_sizes, tuple(shapes[r][d] for d in range(rank)), elem_bytes,
                           dims(sources[r]), dims(targets[r]), target_mesh.get(r)))
    return out


def collective_facts(plans, axis_sizes_of) -> dict[str, list[tuple]]:
    """Rows of the collective relations for `plans` (reshard id -> its
    collectives), numbering the collectives 0, 1, ... in that order;
    `axis_sizes_of(reshard id)`: its mesh's axis sizes."""
    rows: dict[str, list[tuple]] = defaultdict(list)
    c = 0
    for r, collectives in plans.items():
        sizes = axis_sizes_of(r)
        for step, col in enumerate(collectives):
            rows["reshard_step"].append((r, step, c))
            rows["collective"].append((c, col.kind))
            if col.kind == ALL_TO_ALL:
                rows["collective_all_to_all"].append((c, col.src_dim, col.tgt_dim))
                rows["collective_axis"] += [(c, col.src_dim, p, *axis_row(a, sizes))
                                            for p, a in enumerate(col.axes[0])]
            else:
                rows["collective_axis"] += _dim_rows(c, col.axes, sizes)
            rows["collective_result_axis"] += _dim_rows(c, col.result, sizes)
            c += 1
    return dict(rows)


def decomposition_facts(rows: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    """The collective rows of every reshard the reshard rows describe."""
    reshards = reshards_of_facts(rows)
    sizes = {r.id: dict(r.axis_sizes) for r in reshards}
    return collective_facts({r.id: r.plan() for r in reshards}, sizes.__getitem__)


def _dims_of(sharding) -> Dims:
    return tuple(d.axes for d in TensorSharding.from_attr(sharding).dims)


def module_collective_facts(module) -> tuple[dict[str, list[tuple]], list]:
    """Rows of every sdy collective op of `module` as a collective on its own
    (kind, axes, operand shape, element size and sharding, result sharding,
    whether it regathers), numbered 0, 1, ... in walk order; and the ops, by
    number."""
    meshes = Meshes(module)
    rows: dict[str, list[tuple]] = defaultdict(list)
    ops = [op for op in walk_ops(module.operation) if op.name in COLLECTIVE_OPS]
    rows["collective_regather"] = [(c,) for c in sorted(regathering(module, ops))]
    for c, op in enumerate(ops):
        out = op.attributes["out_sharding"]
        sizes = meshes.of(out).axis_sizes
        operand = op.operands[0]
        rows["collective"].append((c, op.name[len("sdy."):]))
        rows["collective_tensor"].append((c, element_bytes(operand)))
        rows["collective_dim"] += [(c, d, n) for d, n in enumerate(shape_of(operand))]
        source = get_sharding(operand)
        if source is not None:
            rows["collective_operand_axis"] += _dim_rows(c, _dims_of(source), sizes)
        rows["collective_result_axis"] += _dim_rows(c, _dims_of(out), sizes)
        attr = AXES_ATTRIBUTE.get(op.name)
        if op.name == "sdy.all_to_all":
            for p in all_to_all_params(op.attributes[attr]):
                rows["collective_all_to_all"].append((c, p.src_dim, p.tgt_dim))
                rows["collective_axis"] += [(c, p.src_dim, i, *axis_row(a, sizes)) for i, a in enumerate(p.axes)]
        elif op.name in ("sdy.all_reduce", "sdy.replicated_to_unreduced"):
            rows["collective_group_axis"] += [(c, i, *axis_row(a, sizes))
                                              for i, a in enumerate(axis_ref_list(op.attributes[attr]))]
        elif attr is not None:
            rows["collective_axis"] += _dim_rows(c, tuple(map(tuple, axis_ref_lists(op.attributes[attr]))), sizes)
    return dict(rows), ops


_REDUCING = ("sdy.all_reduce", "sdy.reduce_scatter")


def regathering(module, ops) -> set[int]:
    """The positions in `ops` (sdy collectives of `module`) of those that
    gather the per-device results of a reduce no collective body combines
    (an argmax) and reduce them again (rules/partition/reduction_kind.dl,
    collective_regathers; convert-global-to-local lowers them so). The
    rules run only where some reducing collective's operand is a reduce's
    result: every regathering chain starts at one."""
    if not any(op.name in _REDUCING and _made_by(op.operands[0], "stablehlo.reduce") for op in ops):
        return set()
    from sdylog.partition.facts import explicit_facts, run_rules
    facts = explicit_facts(module)
    answers = run_rules("reduction_kind", facts)
    results = {facts.ops[c].results[0] for c, _ in answers.select("collective_regathers", "c", "o")}
    return {c for c, op in enumerate(ops) if op.results[0] in results}


def _made_by(value, name: str) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.name == name


def module_collectives(module, filename: str = "-") -> list[dict]:
    """Every collective of `module` with its bytes per device, in one
    evaluation of the rules: the sdy collective ops, then the StableHLO ones
    written per device inside manual computations (device_collectives.py).
    Each {"kind", "axes", "location", "bytes_per_device"}."""
    from sdylog.partition.device_collectives import block_rows, manual_collectives
    rows, ops = module_collective_facts(module)
    manual = manual_collectives(module, filename)
    if not ops and not manual:
        return []
    for name, more in block_rows([block for _, block in manual], first=len(ops)).items():
        rows[name] = rows.get(name, []) + more
    bytes_of = dict(evaluate(rows).select("collective_bytes", "c", "bytes"))
    regathers = {c for c, in rows["collective_regather"]}
    # (a regathering collective is listed as what the devices run: an all_gather)
    sdy = [{"kind": "all_gather" if c in regathers else op.name[len("sdy."):], "axes": axes_text(op),
            "location": format_location(op, filename)} for c, op in enumerate(ops)]
    return [{**entry, "bytes_per_device": bytes_of[c]} for c, entry in enumerate(sdy + [e for e, _ in manual])]


# --- the rules ---------------------------------------------------------------------------
def collectives_program():
    from sdylog.datalog.cache import rule_program
    return rule_program(str(RULES_FILE))


def evaluate(rows: dict[str, list[tuple]]):
    """One evaluation of rules/collectives.dl over `rows` (relation -> rows;
    relations the program does not declare are left out); the engine holds
    every relation."""
    from sdylog.datalog import make_engine
    program = collectives_program()
    eng = make_engine(program)
    for name, data in rows.items():
        if name in program.relations and data:
            eng.load(name, data)
    eng.run()
    return eng
