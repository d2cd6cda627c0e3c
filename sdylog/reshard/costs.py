"""Bytes per device of what the reshard rules insert (rules/reshard/inventory.dl's
`needed` rows), by rules/collectives.dl: each reshard (with its tensor's
shape and element size, its mesh, from and to axes) and each collective
(its axes and operand) becomes that program's input rows; the reshards'
decomposition into collectives is sdylog.partition.collective_costs'
(Shardy's algorithm); one evaluation costs them all. The answer goes back
into the reshard engine as `needed_bytes`, and rules/reshard_costs.dl
sums it there by kind (`needed_count`, `needed_kind_bytes`,
`needed_total_bytes`): people query them all on that engine.

Only for reports: the pass itself never asks for these relations.
"""
from __future__ import annotations

from collections import defaultdict

from sdylog import RULES_DIR
from sdylog.reshard.inventory import NeededRows, by_first

INVENTORY = ("needed_step", "needed", "needed_mesh", "needed_target_mesh", "needed_cross_mesh", "needed_from_axis",
             "needed_to_axis", "needed_axis", "needed_dim_axis")
# what sdylog run, --report and query read after the costs are in
REPORTED = INVENTORY + ("needed_bytes", "needed_count", "needed_kind_bytes", "needed_total_bytes")


def costs_program():
    from sdylog.datalog.cache import rule_program
    return rule_program(str(RULES_DIR / "reshard_costs.dl"))


def cost_needed(needed: NeededRows, engine, facts) -> dict[tuple, int]:
    """Cost every `needed` row (of `engine`, a reshard engine run with at
    least INVENTORY), load `needed_bytes` into it and run
    rules/reshard_costs.dl there; the bytes per device by x = (o, step, i)."""
    from sdylog.ir.types import element_bytes
    from sdylog.partition.collective_costs import decomposition_facts, evaluate

    dims = by_first(facts.rows_per_value("type_dim"))   # (value_dim's rows)
    element = {}
    rows: dict[str, list[tuple]] = defaultdict(list)
    direct = []   # (x, kind, v, mesh): collectives on their own
    number = {x: n for n, (x, *_) in enumerate(needed.needed)}   # (the collectives program's reshard ids)
    for x, kind, _place, v in needed.needed:
        m = needed.mesh.get(x)
        if m is None or not facts.meshes[m].axes or x in needed.cross_mesh:
            continue   # (a single-device mesh, or onto a mesh of other axes: between meshes, not costed)
        if v not in element:
            element[v] = element_bytes(facts.values[v])
        if kind == "reshard":
            r = number[x]
            rows["reshard"].append((r, m, element[v]))
            rows["reshard_dim"] += [(r, d, n) for d, n in dims.get(v, ())]
            rows["reshard_from_axis"] += [(r, *a) for a in needed.from_axes.get(x, ())]
            rows["reshard_to_axis"] += [(r, *a) for a in needed.to_axes.get(x, ())]
            if x in needed.target_mesh:   # (another device order)
                rows["reshard_target_mesh"].append((r, needed.target_mesh[x]))
        else:
            direct.append((x, kind, v, m))
    if not rows and not direct:
        _load(engine, [])
        return {}
    meshes = {m for _, m, _ in rows["reshard"]} | {m for _, m in rows["reshard_target_mesh"]}
    rows["mesh_axis"] = [r for r in facts.rows("mesh_axis") if r[0] in meshes]
    collective_rows = decomposition_facts(dict(rows)) if rows["reshard"] else {}
    first = 1 + max((c for c, _ in collective_rows.get("collective", ())), default=-1)
    facts_in = {**rows, **{k: list(v) for k, v in collective_rows.items()}}
    ids = {}
    for n, (x, kind, v, m) in enumerate(direct):
        c = ids[x] = first + n
        facts_in.setdefault("collective", []).append((c, kind))
        facts_in.setdefault("collective_tensor", []).append((c, element[v]))
        facts_in.setdefault("collective_dim", []).extend((c, d, k) for d, k in dims.get(v, ()))
        facts_in.setdefault("collective_operand_axis", []).extend((c, *r) for r in needed.from_axes.get(x, ()))
        facts_in.setdefault("collective_group_axis", []).extend((c, *r) for r in needed.axes.get(x, ()))
        facts_in.setdefault("collective_axis", []).extend((c, *r) for r in needed.dim_axes.get(x, ()))
    costs = evaluate(facts_in)
    keys = list(number)
    out = {keys[r]: b for r, b in costs.select("reshard_bytes", "r", "bytes")}
    by_collective = dict(costs.select("collective_bytes", "c", "bytes"))
    out.update({x: by_collective[c] for x, c in ids.items() if c in by_collective})
    _load(engine, sorted((*x, b) for x, b in out.items()))
    return out


def _load(engine, rows) -> None:
    engine.declare(costs_program())
    if rows:
        engine.load("needed_bytes", rows)
    engine.run(costs_program())

