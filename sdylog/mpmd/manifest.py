"""The manifest of a partition (`sdylog mpmd --json`): the devices and their
functions, where each argument is fed and each result comes from, and every
channel (`id`, `src`, `dst`, `kind` data/control, `dtype` and `shape` on the
wire, `bytes` of one message)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.mpmd.plan import Plan


def value_names(plan: Plan, values) -> dict:
    """value id -> its name as MLIR prints the prepared module (`%3`, `%arg0`)."""
    facts = plan.facts
    state = ir.AsmState(facts.ops[0].parent.operation if facts.ops[0].parent else facts.ops[0])
    return {v: facts.values[v].get_name(state) for v in values}


def manifest(plan: Plan) -> dict:
    facts = plan.facts
    names = value_names(plan, {ch.value for ch in plan.channels if ch.kind != "predicate"})
    functions = {d: f"{plan.entry}.dev{d}" for d in plan.devices}
    args, positions = [], {d: 0 for d in plan.devices}
    for i, devs in enumerate(plan.arg_fed):
        fed = []
        for d in devs:
            fed.append({"device": d, "position": positions[d]})
            positions[d] += 1
        args.append(fed)
    results, rpos = [], {d: 0 for d in plan.devices}
    for i, d in enumerate(plan.result_loc):
        results.append({"device": d, "position": rpos[d]})
        rpos[d] += 1
    channels = []
    for ch in plan.channels:
        row = ch.manifest(names)
        if ch.kind == "predicate":
            row["value"] = f"predicate of {facts.ops[ch.value].name}"
        channels.append(row)
    return {
        "entry": plan.entry,
        "devices": [{"device": d, "function": functions[d]} for d in plan.devices],
        "arguments": args,
        "results": results,
        "channels": channels,
        "bytes_per_message": sum(ch.bytes for ch in plan.channels),
        "cross_device_edges": plan.stats["cross_edges"],
        "transfers": plan.stats["transfers"],
        "memory_moves": plan.stats["moves"],
    }
