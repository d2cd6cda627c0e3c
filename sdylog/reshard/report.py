"""The reshards and collectives a propagated module needs to become a
partitioned program, with their bytes per device: what `sdylog run`
reports, `--report` writes, `explain` and `query` read.

The reshard rules decide with Shardy's full version (rules/reshard.dl, one
evaluation on the module as the pipeline left it, which is not changed);
their writer writes the decisions into a copy of the module, whose
`sdy.reshard` and collective ops are then listed: those the pipeline's own
export step wrote (`written`) and those the full version adds. Bytes per
device follow the ring model of rules/collectives.dl (partitioning.md
section 8): a reshard's are its collectives' (the decomposition
-sdy-reshard-to-collectives makes), a collective's its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from jaxlib.mlir import ir

from sdylog.ir.collectives import axes_text
from sdylog.ir.rewrite import as_operation, defining_op, op_key
from sdylog.ir.shardings import COLLECTIVE_OPS, Meshes, fully_replicated, get_sharding, mesh_or_ref
from sdylog.ir.types import rank_of
from sdylog.ir.walk import op_list, symbol_name
from sdylog.passes import PassContext

# The ops listed: reshards and the collectives Shardy's passes write.
LISTED = COLLECTIVE_OPS | {"sdy.reshard"}


@dataclass(frozen=True)
class Transfer:
    """One reshard or collective the partitioned module has."""
    kind: str                      # "reshard", "all_reduce", "replicated_to_unreduced", "all_gather", ...
    location: str                  # the op's `file:line:col (jit(f)/name)` ("?" when unknown)
    value: str                     # what it takes: `result 0 of stablehlo.dot_general at m.py:7:20`
    users: tuple[str, ...]         # the ops reading what it makes (past the other reshards and collectives)
    source: str                    # the value's sharding before ("none": no sharding)
    target: str                    # after (a reshard's sharding, a collective's out_sharding)
    axes: str                      # a collective's axes as sdy prints them ("" for a reshard)
    bytes_per_device: int | None   # None: a reshard no collectives make (single device, other mesh axes)
    written: bool                  # the pipeline's export step wrote it (else the full version adds it)
    taken: object = field(default=None, compare=False, repr=False)   # that value in the module (ir.Value)

    def as_dict(self) -> dict:
        out = dict(self.__dict__, users=list(self.users))
        del out["taken"]
        return out


@dataclass
class NeededTransfers:
    """The full version's decisions on a module and what they amount to."""
    decisions: object                            # ReshardDecisions: the engine (every relation) and its facts
    transfers: list[Transfer] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Transfer]:
        return [t for t in self.transfers if t.kind == kind]

    def totals(self) -> dict:
        """kind -> (count, how many the export wrote, bytes per device (None: some unknown))."""
        out: dict = {}
        for t in self.transfers:
            n, written, total = out.get(t.kind, (0, 0, 0))
            b = None if total is None or t.bytes_per_device is None else total + t.bytes_per_device
            out[t.kind] = (n + 1, written + t.written, b)
        return out


def needed_transfers(module, filename: str, engine: str | None = None) -> NeededTransfers:
    """What `module` (propagated, exported; not changed) needs: the full
    version's decisions and every reshard and collective of the module they
    make."""
    from sdylog.reshard.driver import ReshardOptions, decide
    from sdylog.reshard.writer import write_reshards

    ctx = PassContext(filename=filename, engine=engine)   # (derive all: explain and query read every relation)
    with module.context:
        decisions = decide(module, ReshardOptions(full_version=True), ctx)
        copy = module.operation.clone()
        originals = op_list(module.operation)
        copies = op_list(copy.operation)
        pairs = dict(zip(map(op_key, originals), copies))
        original_of = dict(zip(map(op_key, copies), originals))
        facts = replace(decisions.facts, ops=[pairs[op_key(op)] for op in decisions.facts.ops])
        write_reshards(copy, decisions.engine, facts)
        transfers = _transfers(copy, original_of, filename, engine)
    return NeededTransfers(decisions, transfers)


def _transfers(module, original_of: dict, filename: str, engine: str | None) -> list[Transfer]:
    """Every reshard and collective of `module` (walk order) with its bytes;
    `original_of`: op_key of each op it had before the writer wrote -> that
    op in the module the decisions were made on."""
    from sdylog.commands.values import loc_text
    from sdylog.partition.collective_costs import evaluate, module_collective_facts
    from sdylog.passes.reshard_to_collectives import plan_reshard_recipe, recipe_costs

    meshes = Meshes(module)
    ops = [op for op in op_list(module.operation) if op.name in LISTED]
    # bytes: the reshards' decompositions, then every collective on its own
    recipes, recipe_of = [], {}
    for i, op in enumerate(ops):
        if op.name == "sdy.reshard":
            target = op.attributes["sharding"]
            source = get_sharding(_past_barriers(op.operands[0])) or fully_replicated(
                mesh_or_ref(target), rank_of(op.result), True)
            recipe = plan_reshard_recipe(source, target, op.result.type, meshes)
            if not isinstance(recipe, str):
                recipe_of[i] = len(recipes)
                recipes.append(recipe)
            elif recipe == "erase":
                recipe_of[i] = None
    reshard_bytes = [total for total, _steps in recipe_costs(recipes, engine)]
    rows, collectives = module_collective_facts(module)
    collective_bytes = dict(evaluate(rows, engine).read("collective_bytes")) if collectives else {}
    index = {op_key(op): c for c, op in enumerate(collectives)}
    out = []
    for i, op in enumerate(ops):
        if op.name == "sdy.reshard":
            kind, axes, target = "reshard", "", op.attributes["sharding"]
            r = recipe_of.get(i, -1)
            bytes_ = 0 if r is None else None if r == -1 else reshard_bytes[r]
        else:
            kind, axes, target = op.name[len("sdy."):], axes_text(op), op.attributes["out_sharding"]
            bytes_ = collective_bytes[index[op_key(op)]]
        source = get_sharding(_past_barriers(op.operands[0]))
        taken = _taken(op)
        out.append(Transfer(kind, loc_text(op, filename), _value_text(taken, filename),
                            tuple(_user_texts(op, filename)), "none" if source is None else _sharding_text(source),
                            _sharding_text(target), axes, bytes_, op_key(op) in original_of,
                            _original_value(taken, original_of)))
    return out


def _taken(op):
    """The value the op takes, past the reshards and collectives before it."""
    value = op.operands[0]
    while (d := defining_op(value)) is not None and d.name in LISTED:
        value = d.operands[0]
    return value


def _original_value(value, original_of: dict):
    """The value of the module the decisions were made on that `value` of its copy is."""
    d = defining_op(value)
    if d is not None:
        return original_of[op_key(d)].results[ir.OpResult(value).result_number]
    owner = as_operation(value.owner.owner)
    original = original_of[op_key(owner)]
    for region, twin in zip(owner.regions, original.regions):
        for block, twin_block in zip(region.blocks, twin.blocks):
            if block == value.owner:
                return twin_block.arguments[ir.BlockArgument(value).arg_number]
    return None


def _past_barriers(value):
    while (op := defining_op(value)) is not None and op.name == "sdy.propagation_barrier":
        value = op.operands[0]
    return value


def _sharding_text(attr) -> str:
    text = str(attr)
    return text[len("#sdy.sharding"):] if text.startswith("#sdy.sharding<") else text


def _value_text(value, filename: str) -> str:
    """`result 0 of stablehlo.dot_general at m.py:7:20`, `argument 1 of @main`."""
    from sdylog.commands.values import loc_text
    d = defining_op(value)
    if d is not None:
        return f"result {ir.OpResult(value).result_number} of {d.name} at {loc_text(d, filename)}"
    arg = ir.BlockArgument(value)
    owner = as_operation(value.owner.owner)
    if owner.name == "func.func":
        return f"argument {arg.arg_number} of @{symbol_name(owner)}"
    return f"block argument {arg.arg_number} of {owner.name} at {loc_text(owner, filename)}"


def _user_texts(op, filename: str):
    """`stablehlo.add at m.py:8:10` of each op reading the op's result, past
    the reshards and collectives after it."""
    from sdylog.commands.values import loc_text
    seen = set()
    work = [as_operation(op)]
    while work:
        for use in work.pop().result.uses:
            user = as_operation(use.owner)
            if user.name in LISTED:
                work.append(user)
            elif op_key(user) not in seen:
                seen.add(op_key(user))
                yield f"{user.name} at {loc_text(user, filename)}"


# ---------------------------------------------------------------- words
def byte_text(n: int | None) -> str:
    """`3.0 MiB`, `512 B`; `?` for unknown."""
    if n is None:
        return "?"
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def summary_lines(needed: NeededTransfers, verbose: bool = False) -> list[str]:
    """`reshards needed: 12 (3 written by the export step), 1.5 MiB per
    device`, the same for all-reduces, then the other collectives in one
    line when there are any; with `verbose`, one line per reshard and
    collective."""
    totals = needed.totals()

    def amount(kind: str) -> str:
        n, written, total = totals.get(kind, (0, 0, 0))
        return f"{n} ({written} written by the export step), {byte_text(total)} per device" if n else "0"
    lines = [f"reshards needed: {amount('reshard')}", f"all-reduces needed: {amount('all_reduce')}"]
    others = sorted(k for k in totals if k not in ("reshard", "all_reduce"))
    if others:
        lines.append("other collectives needed: " + "; ".join(f"{k} {amount(k)}" for k in others))
    if verbose:
        for t in needed.transfers:
            what = t.kind + (f" {t.axes}" if t.axes else "")
            lines.append(f"  {t.location}: {what} of {t.value}: {t.source} -> {t.target}, "
                         f"{byte_text(t.bytes_per_device)} per device" + ("" if t.written else " (full version)"))
    return lines
