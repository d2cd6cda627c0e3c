"""One MPMD planning run: facts in, rules/mpmd.dl evaluated once, the
decisions read back into a Plan (errors of impossible inputs raised, at
their locations, before anything is written)."""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir

from sdylog import RULES_DIR
from sdylog.ir.diagnostics import SdylogError, UsageError, error_at, format_location
from sdylog.ir.types import num_elements, shape_of
from sdylog.mpmd.options import MpmdOptions
from sdylog.mpmd.plan import Channel, Plan, Region

PROGRAM_FILE = RULES_DIR / "mpmd.dl"


def mpmd_program():
    from sdylog.datalog.cache import rule_program
    return rule_program(str(PROGRAM_FILE))


def evaluate(module, entry: str, filename: str, options: MpmdOptions, provenance: bool = False):
    """(engine, facts): the rules evaluated on the prepared module."""
    from sdylog.datalog import make_engine
    from sdylog.datalog.memory_engine import merged_facts
    from sdylog.facts.extract import extract_facts
    from sdylog.mpmd.facts import mpmd_facts

    with module.context:
        facts = extract_facts(module, filename)
        rows = mpmd_facts(facts, module, entry, filename)
    check_assign(options.assign, {name for _, name, _ in rows.get("op_scope", ())})
    program = mpmd_program()
    engine = make_engine(program, provenance=provenance)
    engine.load_all(merged_facts(program.relations, facts.relations, rows, options.facts()))
    engine.run()
    return engine, facts


def evaluate_regrouped(module, entry: str, filename: str, options: MpmdOptions, provenance: bool = False,
                       strict: bool = True):
    """(engine, facts, sums regrouped): evaluate, and with --reduce-locally
    evaluate again on the sums reduce.py regrouped (the module rewritten in
    place). An input with errors raises the first (check), or with `strict`
    False keeps the first evaluation, whose relations hold them."""
    engine, facts = evaluate(module, entry, filename, options, provenance)
    regrouped = 0
    if options.reduce_locally:   # a second evaluation, on the regrouped sums (a fixed number per run)
        from sdylog.mpmd.reduce import regroup_sums
        with module.context:
            try:
                check(engine, facts, entry, filename)
            except SdylogError:
                if strict:
                    raise
                return engine, facts, 0
            regrouped = regroup_sums(engine, facts)
        if regrouped:
            engine, facts = evaluate(module, entry, filename, options, provenance)
    return engine, facts, regrouped


def plan(module, entry: str, filename: str, options: MpmdOptions, provenance: bool = False) -> Plan:
    engine, facts, regrouped = evaluate_regrouped(module, entry, filename, options, provenance)
    with module.context:
        check(engine, facts, entry, filename)
        result = read_plan(engine, facts, entry, options)
    result.stats["sums_regrouped"] = regrouped
    return result


# ---------------------------------------------------------------- errors
def _first(names: list[str], n: int) -> str:
    return ", ".join(names[:n]) + (f", ... ({len(names)} in all)" if len(names) > n else "")


def check_assign(assign, scopes: set[str]) -> None:
    """Each `--assign NAME@DEV` names a scope some op of the entry function
    comes from (a function it calls or a named computation: prepare.py's
    sdylog.scope); a name matching none is a usage error, with the closest."""
    from sdylog.suggest import did_you_mean
    for name, d in assign:
        if name not in scopes:
            hint = did_you_mean(name, sorted(scopes)) or (
                f" (the ones there are: {_first(sorted(scopes), 12)})" if scopes else
                " (the entry function calls no function and has no named computation)")
            raise UsageError(f"--assign {name}@{d}: no op comes from a function or named computation "
                             f"'{name}'{hint}")


def check_assign_devices(engine) -> None:
    """A usage error for an `--assign NAME@DEV` whose device is beyond the
    module's device count (the rules' error_unknown_assign_device)."""
    n = engine.size("device")
    for name, d in engine.select("error_unknown_assign_device", "name", "d", ordered=True):
        count = (f"--devices {n}" if engine.size("devices_option") else
                 "from its mhlo.num_partitions and num_replicas; --devices N sets another count")
        raise UsageError(f"--assign {name}@{d}: device {d} is beyond the module's {n} device{'s' if n != 1 else ''} "
                         f"({count})")


def _func_op(facts, entry: str):
    from sdylog.ir.walk import symbol_name
    return next(op for op in facts.ops if op.name == "func.func" and symbol_name(op) == entry)


def check(engine, facts, entry: str, filename: str) -> None:
    """Raise the first error the rules found (by op order within each kind)."""
    select = engine.select

    def at(op_id, message):
        return error_at(facts.ops[op_id], message, filename)

    fn = _func_op(facts, entry)

    def at_func(message):
        return error_at(fn, message, filename)

    n = engine.size("device")
    for op, d, _j, _k, e, kind, name in select("error_call_device", "op", "d", "j", "k", "e", "kind", "name",
                                               ordered=True):
        raise at(op, f"'{facts.ops[op].name}' is placed on device {d} but the '{kind}' of @{name} holding it "
                     f"on device {e}")
    for op, mesh in select("error_spmd_sharding", "op", "mesh", ordered=True):
        raise at(op, f"'{facts.ops[op].name}' is sharded over the devices of {mesh}: MPMD partitioning "
                     "places whole ops on devices (maximal shardings); SPMD shardings are not supported")
    for f, i, mesh in select("error_spmd_arg_sharding", "f", "i", "mesh", ordered=True):
        raise at_func(f"argument {i} of @{f} is sharded over the devices of {mesh}: MPMD partitioning "
                      "places whole values on devices (maximal shardings)")
    for op, d in select("error_unknown_device", "op", "d", ordered=True):
        raise at(op, f"device {d} is beyond the module's {n} device{'s' if n != 1 else ''} (0..{n - 1})")
    for f, i, d in select("error_unknown_arg_device", "f", "i", "d", ordered=True):
        raise at_func(f"argument {i} of @{f} is placed on device {d}, beyond the module's {n} devices")
    for f, i, d in select("error_unknown_result_device", "f", "i", "d", ordered=True):
        raise at_func(f"result {i} of @{f} is placed on device {d}, beyond the module's {n} devices")
    check_assign_devices(engine)
    for op, d1, d2 in select("error_two_devices", "op", "d1", "d2", ordered=True):
        raise at(op, f"'{facts.ops[op].name}' has results placed on two devices ({d1} and {d2}): an op runs "
                     "on one device")
    for f, q, d, e in select("error_apart_from_region", "op", "region_op", "d", "e", ordered=True):
        raise at(f, f"'{facts.ops[f].name}' is placed on device {d} but the '{facts.ops[q].name}' holding it "
                    f"({format_location(facts.ops[q], filename)}) runs on device {e}: an op inside "
                    "this region op must stay on its device"
                    + (_ATOMIC_HINT if facts.ops[q].name in _CONTROL_FLOW else ""))
    for f, q, d, e, name in select("error_assign_apart_from_region", "op", "region_op", "d", "e", "name",
                                   ordered=True):
        region = facts.ops[q].name
        raise at(f, f"--assign {name}@{d} places this '{facts.ops[f].name}' (from @{name}) on device {d}, but the "
                    f"'{region}' holding it ({format_location(facts.ops[q], filename)}) runs on device {e} "
                    f"({_region_reason(engine, q, e)}): an op inside this region op must stay on its device"
                    + (_ATOMIC_HINT if region in _CONTROL_FLOW else ""))
    for w, d1, d2 in select("error_condition_devices", "w", "d1", "d2", ordered=True):
        raise at(w, f"the condition of this while is placed on devices {d1} and {d2}: a loop's condition runs "
                    "on one device")
    for f, i, k1, k2 in select("error_memory_kinds", "f", "i", "k1", "k2", ordered=True):
        raise at_func(f"argument {i} of @{f} is given two memory kinds ({k1} and {k2})")
    for op, d in select("error_conflicting_operands", "op", "d", ordered=True):
        bad = sorted({x for (o, x) in engine.select("src_bad_in", "op", "d") if o == op})
        raise at(op, f"operands on conflicting devices: '{facts.ops[op].name}' is needed on device {d} but its "
                     f"operands live on {_devices_text(sorted(set(range(n)) - set(bad)) or bad, n)}; "
                     "--infer-transfers on would transfer them")
    for (op,) in select("error_existing_device_channel", "op", ordered=True):
        raise at(op, "the input already has device-to-device channels: partition a program without them")
    for (v,) in select("error_dynamic_transfer", "v", ordered=True):
        raise error_at(_value_site(facts, v), f"a tensor of dynamic shape ({facts.values[v].type}) would "
                                                "cross devices: its size is unknown", filename)
    for v, d in select("error_unavailable", "v", "d", ordered=True):
        raise error_at(_value_site(facts, v), f"internal error: no device holds this value, needed on device {d}",
                       filename)


_CONTROL_FLOW = ("stablehlo.while", "stablehlo.case", "stablehlo.if")
_ATOMIC_HINT = (" (--control-flow atomic keeps a loop or conditional whole on one device; the default, "
                "--control-flow replicate, runs it on each device taking part)")


def _region_reason(engine, q: int, e: int) -> str:
    """Why region op q runs on device e, in a few words (placed_core's why)."""
    why = next((w for o, d, w in engine.select("placed_core", "op", "d", "why") if o == q and d == e), None)
    if why == "inside-name":
        inside = {f for f, r in engine.select("anchor", "op", "q") if r == q}
        names = sorted({n for f, d, n in engine.select("name_hint", "op", "d", "name") if d == e and f in inside})
        return f"--assign {names[0]}@{e} of an op inside it" if names else "an --assign of an op inside it"
    if why == "name":
        return "an --assign of the scope it comes from"
    if why == "inside":
        return "the placement of an op inside it"
    if why in ("sdy.sharding", "mhlo.sharding", "sdylog.device", "call"):
        return f"its {why} placement" if why != "call" else "the placement of the call it comes from"
    return "where the rules place it"


def _devices_text(devs, n) -> str:
    return "device " + str(devs[0]) if len(devs) == 1 else "devices " + ", ".join(map(str, devs))


def _value_site(facts, v: int):
    """The op defining value v, or for a block argument the op holding its block."""
    from sdylog.ir.rewrite import owning_op
    return owning_op(facts.values[v])


# ---------------------------------------------------------------- reading the plan
def read_plan(engine, facts, entry: str, options: MpmdOptions) -> Plan:
    select = engine.select
    devices = tuple(sorted(d for (d,) in select("device", "d")))
    placed = defaultdict(list)
    for op, d in select("placed", "op", "d", ordered=True):
        placed[op].append(d)
    placed = {op: tuple(sorted(ds)) for op, ds in placed.items()}
    rep = {v: r for v, r in select("rep", "v", "r") if v != r}

    regions = _regions(engine)
    channels, events = _channels(engine, facts, regions)
    moves = defaultdict(list)
    for v, d, k in select("move", "v", "d", "kind", ordered=True):
        moves[(v, d)].append(k)
    reads_kind = {(op, v): k for op, v, k in select("reads_kind", "op", "v", "kind")}
    n_args = len(ir.FunctionType(ir.TypeAttr(_func_op(facts, entry).attributes["function_type"]).value).inputs)
    fed = [[] for _ in range(n_args)]
    for f, i, d in select("arg_fed", "f", "i", "d", ordered=True):
        if f == entry:
            fed[i].append(d)
    result_loc = [d for _, d in sorted((i, d) for f, i, d in select("result_loc", "f", "i", "d") if f == entry)]
    arg_memory = {i: k for f, i, k in select("arg_memory", "func", "index", "kind", ordered=True) if f == entry}
    result_memory = {i: k for f, i, k in select("result_memory", "func", "index", "kind", ordered=True) if f == entry}
    stats = {
        "cross_edges": engine.size("cross_edge") + engine.size("cross_result"),
        "transfers": engine.size("xfer"),
        "channels": len(channels),
        "moves": {f"{k}:{d}": b for (v, d, b), k in _move_bytes(engine)},
        "clones": sum(len(ds) - 1 for ds in placed.values() if len(ds) > 1),
    }
    return Plan(entry, devices, facts, placed, rep, regions, channels, events, dict(moves), reads_kind,
                [tuple(sorted(ds)) for ds in fed], result_loc, arg_memory, result_memory,
                options.bf16_transfers, stats, engine)


def _move_bytes(engine):
    kinds = {(v, d): k for v, d, k in engine.select("move", "v", "d", "kind", ordered=True)}
    return [((v, d, b), kinds[(v, d)]) for v, d, b in engine.select("move_bytes", "v", "d", "bytes", ordered=True)]


def _regions(engine) -> dict:
    select = engine.select
    parts, carriers = defaultdict(set), defaultdict(lambda: defaultdict(set))
    for w, d in select("participates", "w", "d"):
        parts[w].add(d)
    for w, k, d in select("carrier", "w", "k", "d", ordered=True):
        carriers[w][k].add(d)
    leaders = dict(select("leader", "w", "d", ordered=True))
    return {w: Region(w, tuple(sorted(parts[w])), leaders.get(w),
                      {k: tuple(sorted(ds)) for k, ds in carriers[w].items()})
            for (w,) in select("structural", "op", ordered=True)}


def _firing_order(engine) -> tuple[int, list]:
    """(first id, [(after, hop, value, dst, src)]): channel ids follow the
    firing order (key, hop, value, destination), from one past the largest
    handle the input's own channels use; a loop's predicate channels (value
    -1) come before the other channels keyed at the loop."""
    # (left in Python: numbering; the order itself is the rules' xfer_event and merged_transfer)
    select = engine.select
    first = max([h for (h,) in select("existing_channel", "handle")], default=0) + 1
    event_of = {(v, d): (after, hop)
                for v, d, after, hop in select("xfer_event", "v", "d", "after", "hop", ordered=True)}
    merged_rows = select("merged_transfer", "v", "s", "d", "first", "after", ordered=True)
    merged = {(v, d): (first, m) for v, _s, d, first, m in merged_rows}
    pending = [(*event_of[(v, d)], v, d, s) for v, s, d in select("channel", "v", "s", "d") if (v, d) not in merged]
    pending += [(m, 0, v, d, s) for v, s, d, first, m in merged_rows if v == first]
    pending += [(w, -1, -1, d, s) for w, s, d in select("predicate_channel", "w", "s", "d")]
    return first, sorted(pending)


def channel_ids(engine) -> dict:
    """(value, src, dst) -> channel id (a predicate: (-1 - loop, src, dst))."""
    first, pending = _firing_order(engine)
    return {(v if v != -1 else -1 - after, s, d): first + n for n, (after, _h, v, d, s) in enumerate(pending)}


def _channels(engine, facts, regions) -> tuple[list, dict]:
    """Every channel with its id, and each op's channels in firing order."""
    select = engine.select
    first, pending = _firing_order(engine)
    wire = dict(select("wire_type", "v", "elem_type", ordered=True))
    nbytes = {(v, s, d): b for v, s, d, b in select("channel_bytes", "v", "s", "d", "bytes", ordered=True)}
    kind = dict(select("channel_kind", "v", "kind", ordered=True))
    riders = defaultdict(list)
    for t, s, d, w in select("rides_with", "t", "s", "d", "w"):
        riders[(w, s, d)].append(t)
    recv_at = {(v, d): ("before", a) for v, d, a in select("recv_before", "v", "d", "before", ordered=True)}
    recv_at.update({(v, d): ("after", b) for v, d, b in select("recv_after", "v", "d", "after", ordered=True)})
    groups = defaultdict(list)   # (first value, dst) -> the values merged with it
    for v, d, first in select("merged_transfer", "v", "d", "first"):
        groups[(first, d)].append(v)
    channels, events = [], defaultdict(list)
    for n, (after, hop, v, d, s) in enumerate(pending):
        cid = first + n
        if v == -1:   # a predicate of loop `after`
            ch = Channel(cid, after, s, d, "predicate", "i1", "i1", (), 1, after)
            regions[after].predicate[d] = ch
        else:
            value = facts.values[v]
            shape = tuple(shape_of(value.type)) if kind[v] == "data" else (0,)
            et = str(ir.RankedTensorType(value.type).element_type) if kind[v] == "data" else "f32"
            members = tuple(sorted(groups.get((v, d), ())))
            if members:   # one flat tensor of the merged values, received right away
                shape = (sum(num_elements(facts.values[m]) for m in members),)
                nb = sum(nbytes[(m, s, d)] for m in members)
                ch = Channel(cid, v, s, d, "data", et, wire[v], shape, nb, after, 0, (), None, members)
            else:
                ch = Channel(cid, v, s, d, kind[v], et, wire[v], shape, nbytes[(v, s, d)], after, hop,
                             tuple(sorted(riders.get((v, s, d), ()))), recv_at.get((v, d)))
            events[("after", after)].append((ch, "send"))
            events[ch.recv_at or ("after", after)].append((ch, "recv"))
        channels.append(ch)
    return channels, dict(events)
