"""`sdylog explain FILE VALUE` on a module with device placements: why the
op defining VALUE runs where it does, where VALUE is, why it is sent (and
on which channel), back to the user's placements, read from the rules'
relations (rules/mpmd/*.dl); `--tree` prints the raw Datalog derivation.
`sdylog query FILE RELATION` reads the same relations (mpmd_engine)."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.datalog.named_rows import Lookup
from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.ir.rewrite import owning_op
from sdylog.ir.walk import func_ops, symbol_name, walk_ops
from sdylog.mpmd.options import MpmdOptions

# result_loc_why's reasons (rules/mpmd/availability.dl)
_RESULT_LOC_WORDS = {"hint": "its sharding places it there",
                     "natural": "where its value naturally is (the smallest such device)",
                     "first": "no device has its value without a transfer: the first device"}
# Relations a chain of placement steps goes through (`--tree` follows them to the user's placements).
CHAIN_RELATIONS = ("placed", "placed_core", "reach", "needs", "explicit", "explicit_by", "use", "dst", "xfer")


def mpmd_engine(path: str, options: MpmdOptions, provenance: bool = False):
    """(engine, facts, names, entry, filename) of the rules on FILE, as
    `sdylog mpmd` evaluates them (with --reduce-locally, on the regrouped
    sums): evaluated even when the input has errors (their relations are
    rows to read).
    `names`: value id -> the input's name of the value, for the entry's
    values that prepare leaves (it inlines the calls). A value is named only
    if it is still what it was (value_key): inlining erases values, a value
    it makes may take an erased one's address, and the bindings compare
    values by address."""
    from sdylog.ir.rewrite import value_key
    from sdylog.mpmd.driver import evaluate_regrouped
    from sdylog.mpmd.prepare import entry_name, prepare
    filename = display_name(path)
    module = parse_module(read_source(path), filename)
    with module.context:
        entry = entry_name(module, options.entry, filename)
        before = {v: (name, value_key(v)) for v, name in _input_names(module, entry).items()}
    entry = prepare(module, filename, options.entry)
    engine, facts, _ = evaluate_regrouped(module, entry, filename, options, provenance, strict=False)
    names = {}
    with module.context:
        for vid, v in enumerate(facts.values):
            if v is None:
                continue
            name, key = before.get(v, (None, None))
            if name is not None and key == value_key(v):   # (not a new value in an erased one's place)
                names[vid] = name
    return engine, facts, names, entry, filename


def _input_names(module, entry: str) -> dict:
    """ir.Value -> its name as MLIR prints the input, for the entry function."""
    fn = next(f for f in func_ops(module) if symbol_name(f) == entry)
    state = ir.AsmState(fn.operation)
    out = {}
    for a in fn.regions[0].blocks[0].arguments:
        out[a] = a.get_name(state)
    for op in walk_ops(fn):
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    out[a] = a.get_name(state)
        for r in op.results:
            out[r] = r.get_name(state)
    return out


class Explainer:
    def __init__(self, engine, facts, names: dict, entry: str, filename: str):
        """`names`: value id -> the input's name of the value (mpmd_engine's)."""
        self.engine, self.facts, self.entry, self.filename = engine, facts, entry, filename
        self.rel = Lookup(engine)
        self.names = dict(names)
        self.result_of = {v: (op, k) for op, k, v in facts.rows("op_result")}
        self.args = {v: i for f, i, v in facts.rows("func_arg") if f == entry}
        from sdylog.mpmd.driver import channel_ids
        self.channel_ids = channel_ids(engine)

    # ---- names
    def value(self, v: int) -> str:
        return self.names.get(v, f"<value #{v}>")

    def op(self, o: int) -> str:
        op = self.facts.ops[o]
        return f"{op.name} ({format_location(op, self.filename) or '?'})"

    def devices(self, ds) -> str:
        ds = sorted(set(ds))
        return ("device " if len(ds) == 1 else "devices ") + ", ".join(map(str, ds))

    def rep(self, v: int) -> int:
        row = self.rel.first("rep", v=v)
        return row.r if row else v

    # ---- placement
    def placement(self, o: int, pad: str) -> list[str]:
        """Why op o runs where it does."""
        rel = self.rel
        where = [x.d for x in rel.where("placed", op=o)]
        core = rel.first("placed_core", op=o)
        if core:
            chains = self.use_chains(o, pad + "  ") if core.why.startswith("used") else []
            return [f"{pad}runs on {self.devices(where)}: " + self.core_reason(o, core.d, core.why)] + chains
        if rel.exists("cloneable", op=o):
            return [f"{pad}computed from constants only: on each device that uses it ({self.devices(where)}), "
                    "never sent"]
        led = rel.first("led", op=o)
        if led:
            w = led.w
            return [f"{pad}in the condition of the {self.op(w)}: runs on its leader, {self.devices(where)} "
                    f"({self.leader_reason(w)})"]
        anchor = rel.first("anchor", op=o)
        if anchor:
            q = anchor.q
            return [f"{pad}inside {self.op(q)}, which runs with everything in it:"] + self.placement(q, pad + "  ")
        if rel.exists("transparent", op=o):
            req = rel.where("op_request", op=o)
            ask = f"; it asks for a copy on {self.devices([x.d for x in req])}" if req else ""
            return [f"{pad}a sharding annotation: its result is its operand (no computation){ask}"]
        if rel.exists("structural", op=o):
            parts = [x.d for x in rel.where("participates", w=o)]
            text = f"{pad}each of {self.devices(parts)} runs its own copy of it"
            lead = rel.first("leader", w=o)
            if lead:
                text += f"; the condition runs on device {lead.d} ({self.leader_reason(o)})"
            return [text]
        return [f"{pad}not placed (a terminator or an op outside the entry function)"]

    def core_reason(self, o: int, d: int, why: str) -> str:
        rel = self.rel
        if why == "sdy.sharding":
            return f"its sdy.sharding is on the maximal mesh of device {d}"
        if why == "mhlo.sharding":
            return f"its mhlo.sharding is {{maximal device={d}}}"
        if why == "sdylog.device":
            return f"its sdylog.device attribute names device {d}"
        if why == "call":
            call = rel.first("call_hint", op=o, level=0)   # (the innermost placed one)
            return f"it comes from the {call.kind} of @{call.name}, placed on device {d}"
        if why == "inside":
            inner = [x.op for x in rel.where("anchor", q=o) if rel.exists("placement_hint", op=x.op)]
            return f"an op inside it, {self.op(inner[0]) if inner else '?'}, is placed on device {d}"
        if why == "inside-name":
            inner = [x for x in rel.where("anchor", q=o) if rel.exists("name_hint", op=x.op, d=d)]
            hint = rel.first("name_hint", op=inner[0].op, d=d) if inner else None
            return (f"an op inside it, {self.op(inner[0].op)}, comes from @{hint.name}: --assign {hint.name}@{d}"
                    if hint else f"an --assign of an op inside it names device {d}")
        if why == "name":
            depth = rel.first("assigned_depth", op=o).depth
            scope = rel.first("op_scope", op=o, depth=depth).name
            return f"--assign {scope}@{d} (it comes from @{scope})"
        needs = sorted(x.d for x in rel.where("needs", op=o))
        if why == "used":
            return f"the rules place it where its results are used ({self.devices(needs)}; at most max-clones)"
        if why == "used+local":
            return (f"its results are used on {self.devices(needs)}; device {d} holds all its operands (no transfer "
                    "of them), the smallest such")
        if why == "used-first":
            return f"its results are used on {self.devices(needs)}, none of which holds all its operands: the smallest"
        if why == "region":
            return "nobody uses its results; it goes with the other ops of its loop or branch, where its operands are"
        if why == "operands":
            return f"nobody uses its results; device {d} holds all its operands (the smallest such)"
        if why == "near":
            return f"nobody uses its results; beside the producer of an operand placed on device {d} by the user"
        return "nobody uses its results and its operands are nowhere in particular: the first device"

    def leader_reason(self, w: int) -> str:
        rank = min(x.rank for x in self.rel.where("leader_pick", w=w))
        return {0: "an op of the condition is placed there",
                1: "it holds what the condition reads and runs ops of the loop",
                2: "it holds what the condition reads",
                3: "it runs ops of the loop",
                4: "the first device"}[rank]

    def use_chains(self, o: int, pad: str) -> list[str]:
        """For each device op o is needed on, one chain of uses back to a placed op."""
        out = []
        for d in sorted(x.d for x in self.rel.where("needs", op=o)):
            chain = self.chain(o, d)
            out.append(f"{pad}on device {d}:" + (" (through a loop's or branch's values)" if not chain else ""))
            out += [f"{pad}  {line}" for line in chain]
        return out

    def chain(self, o: int, d: int, limit: int = 12) -> list[str]:
        """Uses from op o's results to a use on device d that the user placed (breadth first)."""
        rel = self.rel
        start = [x.value for x in rel.where("op_result", op=o) if rel.exists("reach", v=x.value, d=d)]
        seen, queue = set(start), [(v, []) for v in start]
        while queue:
            v, path = queue.pop(0)
            if len(path) >= limit:
                continue
            for q in (x.op for x in rel.where("op_input", v=v)):
                if rel.exists("explicit", op=q, d=d):
                    why = rel.first("explicit_by", op=q, d=d).why
                    return path + [f"{self.value(v)} is read by {self.op(q)}, placed on device {d} by "
                                   + ("--assign" if why in ("name", "inside-name") else why)]
                if rel.exists("free", op=q):
                    for r in (x.value for x in rel.where("op_result", op=q)):
                        if r not in seen and rel.exists("reach", v=r, d=d):
                            seen.add(r)
                            queue.append((r, path + [f"{self.value(v)} is read by {self.op(q)} (placed by the "
                                                     "rules where its results are used)"]))
            for f, i, u in self.facts.rows("func_return"):
                if f == self.entry and self.rep(u) == v and rel.exists("result_hint", func=f, index=i, d=d):
                    return path + [f"{self.value(v)} is result {i} of @{f}, placed on device {d}"]
            for t in (x.op for x in rel.where("op_request", d=d)):
                if any(self.rep(x.value) == v for x in rel.where("op_operand", op=t)):
                    return path + [f"{self.value(v)} is asked for on device {d} by {self.op(t)}"]
        return []

    # ---- where a value is, and why it travels
    def whereabouts(self, v: int, pad: str) -> list[str]:
        rel = self.rel
        r = self.rep(v)
        out = []
        if r != v:
            out.append(f"{pad}stands for {self.value(r)} (a sharding annotation or a loop-invariant slot)")
        on = [x.d for x in rel.where("avail", v=r)]
        if on:
            out.append(f"{pad}is on {self.devices(on)} without a transfer")
        for s, d in sorted((x.s, x.d) for x in rel.where("channel", v=r)):
            out.append(f"{pad}sent {s} -> {d} on channel {self.channel_ids[(r, s, d)]}: " + self.channel_text(r, s, d))
            out += [f"{pad}  {line}" for line in self.needed_on(r, d)]
        for x in rel.where("rides_with", t=r):
            out.append(f"{pad}a token: rides to device {x.d} with {self.value(x.w)}'s transfer (its recv follows "
                       "the effect)")
        for x in rel.where("move", v=r):
            out.append(f"{pad}moved to {x.kind} memory on device {x.d}")
        return out

    def channel_text(self, v: int, s: int, d: int) -> str:
        kind = self.rel.first("channel_kind", v=v).kind
        wire = self.rel.first("wire_type", v=v)
        nbytes = self.rel.first("channel_bytes", v=v, s=s, d=d)
        what = "a control transfer (an empty message after the effect)" if kind == "control" else \
            f"as {wire.elem_type if wire else '?'}"
        hop = self.rel.first("hop", v=v, d=d)
        chained = f", forwarded by device {s} (chain hop {hop.n})" if hop and hop.n > 0 else ""
        return f"{what}, {nbytes.bytes if nbytes else '?'} bytes a message{chained}"

    def needed_on(self, v: int, d: int) -> list[str]:
        """Why device d needs v: its readers there."""
        rel = self.rel
        out = []
        for q in (x.op for x in rel.where("op_input", v=v)):
            if rel.exists("placed", op=q, d=d):
                out.append(f"read there by {self.op(q)}")
        for f, i, u in self.facts.rows("func_return"):
            if f == self.entry and self.rep(u) == v and rel.exists("result_loc", f=f, i=i, d=d):
                out.append(f"delivered there as result {i} of @{f}")
        for x in rel.where("carrier", d=d):
            if any(self.rep(y.value) == v for y in rel.where("op_operand", op=x.w, index=x.k)):
                out.append(f"carried there by {self.op(x.w)} (slot {x.k})")
        return out[:6] + ([f"... and {len(out) - 6} more"] if len(out) > 6 else [])

    # ---- the whole answer
    def explain_value(self, v: int, label: str) -> str:
        lines = []
        if v in self.args:
            i = self.args[v]
            hint = self.rel.first("arg_hint", func=self.entry, index=i)
            lines.append(f"{label}: argument {i} of @{self.entry}")
            lines.append("  placed on device %d by its sharding" % hint.d if hint else
                         "  not placed: the caller feeds it to each device that reads it")
        else:
            o, k = self.result_of.get(v, (None, None))
            if o is None:
                owner = owning_op(self.facts.values[v])
                lines.append(f"{label}: a block argument of {owner.name} ({format_location(owner, self.filename)})")
            else:
                lines.append(f"{label}: result {k} of {self.op(o)}")
                lines += self.placement(o, "  ")
        lines += self.whereabouts(v, "  ")
        return "\n".join(lines) + "\n"

    def explain_result(self, i: int) -> str:
        rows = [r for r in self.facts.rows("func_return") if r[0] == self.entry and r[1] == i]
        if not rows:
            raise SdylogError(f"@{self.entry} has no result {i}")
        v = self.rep(rows[0][2])
        loc = self.rel.first("result_loc", f=self.entry, i=i)
        d = loc.d if loc else "?"
        why = _RESULT_LOC_WORDS[self.rel.first("result_loc_why", f=self.entry, i=i).why]
        return (f"@{self.entry}:result{i} is {self.value(v)}, delivered on device {d}: {why}\n"
                + self.explain_value(v, self.value(v)))


def explain_text(path: str, value_spec: str, options: MpmdOptions, tree: bool = False, depth: int = 1) -> str:
    from sdylog.commands.values import name_ranges, parse_spec
    spec = parse_spec(value_spec)
    engine, facts, names, entry, filename = mpmd_engine(path, options, provenance=tree)
    ex = Explainer(engine, facts, names, entry, filename)
    if spec.func is not None and spec.func != entry:
        raise SdylogError(f"@{spec.func} is not the partitioned function @{entry}")
    if spec.name is None:
        text = ex.explain_result(spec.result)
        vids = [ex.rep(r[2]) for r in facts.rows("func_return") if r[0] == entry and r[1] == spec.result]
    else:
        vids = sorted(v for v, n in ex.names.items() if n == spec.name)
        if not vids:
            raise SdylogError(f"no value {spec.name} in @{entry}; values are "
                              f"{name_ranges(ex.names[v] for v in sorted(ex.names))}")
        text = "".join(ex.explain_value(v, f"@{entry}:{spec.name}") for v in vids)
    if tree:
        text += derivation_trees(engine, ex, vids, depth)
    return text


def derivation_trees(engine, ex: Explainer, vids: list, depth: int) -> str:
    from sdylog.datalog.explain import explain
    out = []
    for v in vids:
        o = ex.result_of.get(v, (None,))[0]
        rows = [("placed", r) for r in ex.rel.where("placed", op=o)] if o is not None else []
        rows += [("channel", r) for r in ex.rel.where("channel", v=ex.rep(v))]
        for relation, row in rows:
            out.append(explain(engine, relation, row, max_depth=depth, follow=CHAIN_RELATIONS).format())
    return "".join(out)
