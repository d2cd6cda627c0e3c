"""Facts compared ids aside (tests of sdylog/facts/follow.py and shared.py)."""
from sdylog.facts.schema import schema


def compacted(facts) -> dict:
    """The facts' relations with op, value (and tensor) and rule ids numbered
    0, 1, ... in their order, and the other things the reshard step reads
    (the id maps, meshes, flags)."""
    ops = sorted(o for o, *_ in facts.rows("op"))
    values = sorted(v for v, *_ in facts.rows("value"))
    slots = sorted(t for _, _, t in facts.rows("func_result_tensor"))
    rules = sorted({r for _, r in facts.rows("op_rule")})
    ids = {"Op": {o: i for i, o in enumerate(ops)}, "Rule": {r: i for i, r in enumerate(rules)}}
    ids["Value"] = ids["Tensor"] = {v: i for i, v in enumerate(values + slots)}
    for by_id in ids.values():
        by_id[-1] = -1
    out = {}
    for name, rows in facts.relations.items():
        if not rows:
            continue
        types = [c.type_name for c in schema().relations[name].columns]
        if name == "op":
            types[3] = "Op"   # (an op's order is its id)
        maps = [ids.get(t) for t in types]
        out[name] = [tuple(v if m is None else m[v] for v, m in zip(row, maps)) for row in rows]
    out["shardings"] = facts.shardings
    out["sharded_ops"] = sorted(ids["Op"][o] for o in facts.sharded_ops)
    out["ranked_values"] = [ids["Value"][v] for (v,) in facts.ranked_values()]
    out["op_names"] = facts.op_names
    out["rules"] = [facts.rules[r] for r in rules]
    value, op = ids["Value"], ids["Op"]
    out["value_ops"] = [op[facts.value_ops[v]] for v in values]
    # (a function op's handle compares by the op it points to)
    out["func_args"] = {value[v]: arg for v, arg in facts.func_args.items()}
    out["func_results"] = {value[t]: result for t, result in facts.func_results.items()}
    out["meshes"] = facts.meshes
    out["mesh_symbols"] = facts.mesh_symbols
    out["unknown_ops"] = facts.unknown_ops
    out["rules_from_attributes"] = facts.rules_from_attributes
    return out
