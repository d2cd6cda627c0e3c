"""The reshards and collectives a propagated module needs to become a
partitioned program, with their bytes per device: what `sdylog run`
reports, `--report` writes, the API lists and `explain` reads.

Two parts: those the pipeline's own export step already wrote into the
module (-sdy-propagation-pipeline runs the non-full version of
-sdy-insert-explicit-reshards: concatenates, a dot pattern, call
operands), listed from the module; and those Shardy's full version would
insert into it, from the reshard rules (sdylog/reshard/inventory.py:
rules/reshard/inventory.dl, costed by rules/reshard_costs.dl; one
evaluation, the module not changed). Bytes per device follow the ring
model of rules/collectives.dl (partitioning.md section 8): a written
reshard's are those of the collectives -sdy-reshard-to-collectives makes
of it, a written collective's its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sdylog.ir.collectives import axes_text
from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.ir.rewrite import defining_op, op_key
from sdylog.ir.shardings import COLLECTIVE_OPS, Meshes, fully_replicated, get_sharding, mesh_or_ref
from sdylog.ir.types import rank_of
from sdylog.ir.walk import op_list
from sdylog.model.sharding import TensorSharding
from sdylog.partition.layout import bytes_text
from sdylog.reshard.inventory import Inserted, Inventory

# The ops listed as written: reshards and the collectives Shardy's passes write.
LISTED = COLLECTIVE_OPS | {"sdy.reshard"}
WRITTEN = "written"   # an Inserted's place when the export step wrote it


@dataclass
class Needed:
    """What a module needs to be partitioned."""
    inventory: Inventory                          # what the full version inserts (engine: every relation)
    written: list[Inserted] = field(default_factory=list)   # what the export step wrote (place "written")

    @property
    def items(self) -> list[Inserted]:
        return self.written + self.inventory.items

    def totals(self) -> dict:
        """kind -> (count, how many the export step wrote, bytes per device)."""
        out: dict = {}
        for i in self.items:
            n, written, total = out.get(i.kind, (0, 0, 0))
            out[i.kind] = (n + 1, written + (i.place == WRITTEN), total + (i.bytes_per_device or 0))
        return out

    def uncosted(self) -> int:
        """How many have no bytes (a reshard between a mesh and a single device's)."""
        return sum(1 for i in self.items if i.bytes_per_device is None)


def needed(module, ctx) -> Needed:
    """What `module` (propagated and exported; not changed) needs. A module
    Shardy's full version rejects is bad input: its located error."""
    from sdylog.reshard.inventory import needed_inventory
    with module.context:
        inventory = needed_inventory(module, ctx)
        if inventory.error is not None:
            raise SdylogError(inventory.error)
        return Needed(inventory, written_ops(module, ctx.filename, inventory.facts.value_ids))


def written_ops(module, filename: str, value_ids=None) -> list[Inserted]:
    """Every reshard and collective of `module` (walk order) with its bytes;
    `value_ids` (ir.Value -> fact id): each one's `value` is the id of the
    value it takes (past the reshards and collectives before it)."""
    from sdylog.partition.collective_costs import evaluate, module_collective_facts
    from sdylog.passes.reshard_to_collectives import plan_reshard_recipe, recipe_costs

    ops = [op for op in op_list(module.operation) if op.name in LISTED]
    if not ops:
        return []
    meshes = Meshes(module)
    recipes, recipe_of = [], {}   # index in ops -> index in recipes (None: no collective, -1: none known)
    for n, op in enumerate(ops):
        if op.name == "sdy.reshard":
            recipe = plan_reshard_recipe(_source(op), op.attributes["sharding"], op.result.type, meshes)
            recipe_of[n] = None if recipe == "erase" else -1 if isinstance(recipe, str) else len(recipes)
            if recipe_of[n] not in (None, -1):
                recipes.append(recipe)
    reshard_bytes = [total for total, _steps in recipe_costs(recipes)]
    rows, collectives = module_collective_facts(module)
    collective_bytes = dict(evaluate(rows).select("collective_bytes", "c", "bytes")) if collectives else {}
    collective_of = {op_key(op): c for c, op in enumerate(collectives)}
    out = []
    for n, op in enumerate(ops):
        source = TensorSharding.from_attr(_source(op))
        if op.name == "sdy.reshard":
            r = recipe_of[n]
            kind, axes, target = "reshard", None, _dims(TensorSharding.from_attr(op.attributes["sharding"]))
            bytes_ = 0 if r is None else None if r == -1 else reshard_bytes[r]
        else:
            kind, axes, target = op.name[len("sdy."):], axes_text(op), None
            bytes_ = collective_bytes.get(collective_of.get(op_key(op)))
        mesh = source.mesh if isinstance(source.mesh, str) else None
        value = (value_ids or {}).get(_taken(op), -1)
        out.append(Inserted(kind, op.name, format_location(op, filename), WRITTEN, 0, mesh,
                            _dims(source), target, axes, bytes_, value=value))
    return out


def _taken(op):
    """The value `op` takes, past the reshards and collectives before it."""
    value = op.operands[0]
    while (d := defining_op(value)) is not None and d.name in LISTED:
        value = d.operands[0]
    return value


def _source(op):
    """The sharding of what `op` reads (past propagation barriers; fully
    replicated when it has none)."""
    value = op.operands[0]
    while (d := defining_op(value)) is not None and d.name == "sdy.propagation_barrier":
        value = d.operands[0]
    own = op.attributes["sharding" if op.name == "sdy.reshard" else "out_sharding"]
    return get_sharding(value) or fully_replicated(mesh_or_ref(own), rank_of(op.result), True)


def _dims(s: TensorSharding) -> str:
    """`[{"x"}, {}]`, as inventory.py writes a sharding."""
    return "[" + ", ".join(str(d) for d in s.dims) + "]"


# ---------------------------------------------------------------- words
def inserted_text(i: Inserted) -> str:
    """`m.py:7:20: stablehlo.dot operand 0: reshard [{"x"}, {}] -> [{}, {"x"}], 48 B per device`."""
    where = f"{i.location}: " if i.location else ""
    what = f"{i.kind} {i.axes}" if i.axes else i.kind
    onto = f" (@{i.mesh} -> @{i.to_mesh})" if i.to_mesh else ""
    move = f" {i.from_sharding} -> {i.to_sharding}{onto}" if i.to_sharding is not None else \
        (f" on {i.from_sharding}" if i.from_sharding else "")
    cost = "not costed (between meshes)" if i.bytes_per_device is None else \
        f"{bytes_text(i.bytes_per_device)} per device"
    at = "written by the export step" if i.place == WRITTEN else f"{i.op} {i.place} {i.index}"
    return f"{where}{at}: {what}{move}, {cost}"


def summary_lines(needed: Needed, verbose: bool = False) -> list[str]:
    """`reshards needed: 3 (1 written by the export step), 416 B per
    device`, the same for all-reduces, then the other collectives in one
    line when there are any; with `verbose`, one line per reshard and
    collective."""
    totals = needed.totals()

    def amount(kind: str) -> str:
        n, written, total = totals.get(kind, (0, 0, 0))
        if not n:
            return "0"
        return (f"{n}" + (f" ({written} written by the export step)" if written else "")
                + f", {bytes_text(total)} per device")
    lines = [f"reshards needed: {amount('reshard')}", f"all-reduces needed: {amount('all_reduce')}"]
    others = sorted(k for k in totals if k not in ("reshard", "all_reduce"))
    if others:
        lines.append("other collectives needed: " + "; ".join(f"{k} {amount(k)}" for k in others))
    if needed.uncosted():
        lines.append(f"  ({needed.uncosted()} between meshes not costed)")
    if verbose:
        lines += [f"  {inserted_text(i)}" for i in needed.items]
    return lines
