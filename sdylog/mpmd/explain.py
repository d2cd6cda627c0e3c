"""`sdylog explain FILE VALUE` on a module with device placements: why the
op defining VALUE runs where it does, where VALUE is, why it is sent (and
on which channel), back to the user's placements, read from the rules'
relations (rules/mpmd/*.dl); `--tree` prints the raw Datalog derivation.
`sdylog query FILE RELATION` reads the same relations (mpmd_engine)."""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.ir.rewrite import owning_op
from sdylog.ir.walk import func_ops, symbol_name, walk_ops
from sdylog.mpmd.options import MpmdOptions

# Relations a chain of placement steps goes through (`--tree` follows them to the user's placements).
CHAIN_RELATIONS = ("placed", "placed_core", "reach", "needs", "explicit", "explicit_by", "use", "dst", "xfer")


def mpmd_relations() -> set:
    from sdylog.mpmd.driver import mpmd_program
    return set(mpmd_program().relations)


def mpmd_engine(path: str, options: MpmdOptions, provenance: bool = False):
    """(engine, facts, names, entry) of the rules on FILE: evaluated even when
    the input has errors (their relations are rows to read)."""
    from sdylog.mpmd.driver import evaluate
    from sdylog.mpmd.prepare import entry_name, prepare
    filename = display_name(path)
    module = parse_module(read_source(path), filename)
    with module.context:
        entry = entry_name(module, options.entry, filename)
        names = _input_names(module, entry)
    entry = prepare(module, filename, options.entry)
    engine, facts = evaluate(module, entry, filename, options, provenance)
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


class _Index:
    """The relations explain reads, indexed."""

    def __init__(self, engine):
        self.engine = engine
        self._cache = {}

    def by(self, relation: str, *cols) -> dict:
        key = (relation, cols)
        if key not in self._cache:
            idx = defaultdict(list)
            for row in self.engine.read(relation):
                idx[row[cols[0]] if len(cols) == 1 else tuple(row[c] for c in cols)].append(row)
            self._cache[key] = idx
        return self._cache[key]

    def rows(self, relation: str, *key, cols=(0,)):
        return self.by(relation, *cols).get(key[0] if len(key) == 1 else tuple(key), [])

    def has(self, relation: str, *key, cols=(0,)) -> bool:
        return bool(self.rows(relation, *key, cols=cols))


class Explainer:
    def __init__(self, engine, facts, names: dict, entry: str, filename: str):
        self.engine, self.facts, self.entry, self.filename = engine, facts, entry, filename
        self.rel = _Index(engine)
        self.names = {}
        for value, name in names.items():
            vid = facts.value_ids.get(value)
            if vid is not None:
                self.names[vid] = name
        self.result_of = {v: (op, k) for op, k, v in facts.rows("op_result")}
        self.args = {v: i for f, i, v in facts.rows("func_arg") if f == entry}
        from sdylog.mpmd.driver import channel_ids
        self.channel_ids = channel_ids(engine)

    # ---- names
    def value(self, v: int) -> str:
        return self.names.get(v, f"<value #{v}>")

    def op(self, o: int) -> str:
        op = self.facts.ops[o]
        return f"{op.name} ({format_location(op.location, self.filename) or '?'})"

    def devices(self, ds) -> str:
        ds = sorted(set(ds))
        return ("device " if len(ds) == 1 else "devices ") + ", ".join(map(str, ds))

    def rep(self, v: int) -> int:
        rows = self.rel.rows("rep", v)
        return rows[0][1] if rows else v

    # ---- placement
    def placement(self, o: int, pad: str) -> list[str]:
        """Why op o runs where it does."""
        rel, name = self.rel, self.facts.ops[o].name
        where = [d for _, d in rel.rows("placed", o)]
        core = rel.rows("placed_core", o)
        if core:
            _, d, why = core[0]
            chains = self.use_chains(o, pad + "  ") if why.startswith("used") else []
            return [f"{pad}runs on {self.devices(where)}: " + self.core_reason(o, d, why)] + chains
        if rel.has("cloneable", o):
            return [f"{pad}computed from constants only: on each device that uses it ({self.devices(where)}), "
                    "never sent"]
        led = rel.rows("led", o)
        if led:
            w = led[0][1]
            return [f"{pad}in the condition of the {self.op(w)}: runs on its leader, {self.devices(where)} "
                    f"({self.leader_reason(w)})"]
        anchor = rel.rows("anchor", o)
        if anchor:
            q = anchor[0][1]
            return [f"{pad}inside {self.op(q)}, which runs with everything in it:"] + self.placement(q, pad + "  ")
        if rel.has("transparent", o):
            req = rel.rows("op_request", o)
            ask = f"; it asks for a copy on {self.devices([d for _, d in req])}" if req else ""
            return [f"{pad}a sharding annotation: its result is its operand (no computation){ask}"]
        if rel.has("structural", o):
            parts = [d for _, d in rel.rows("participates", o)]
            text = f"{pad}each of {self.devices(parts)} runs its own copy of it"
            lead = rel.rows("leader", o)
            if lead:
                text += f"; the condition runs on device {lead[0][1]} ({self.leader_reason(o)})"
            return [text]
        return [f"{pad}not placed (a terminator or an op outside the entry function)"]

    def core_reason(self, o: int, d: int, why: str) -> str:
        rel = self.rel
        if why == "sdy.sharding":
            return f"its sdy.sharding is on the maximal mesh of device {d}"
        if why == "mhlo.sharding":
            return f"its mhlo.sharding is {{maximal device={d}}}"
        if why == "sdylog.device":
            return f"its sdylog.device attribute (a call placed there, or the user's) names device {d}"
        if why == "inside":
            inner = [f for f, q in rel.engine.read("anchor") if q == o and rel.has("op_hint", f)]
            return f"an op inside it, {self.op(inner[0]) if inner else '?'}, is placed on device {d}"
        if why == "name":
            depth = rel.rows("assigned_depth", o)[0][1]
            scope = next(n for _, n, k in rel.rows("op_scope", o) if k == depth)
            return f"--assign {scope}@{d} (it comes from @{scope})"
        needs = sorted(x for _, x in rel.rows("needs", o))
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
        rank = min(r for _, _, r in self.rel.rows("leader_pick", w))
        return {0: "an op of the condition is placed there",
                1: "it holds what the condition reads and runs ops of the loop",
                2: "it holds what the condition reads",
                3: "it runs ops of the loop",
                4: "the first device"}[rank]

    def use_chains(self, o: int, pad: str) -> list[str]:
        """For each device op o is needed on, one chain of uses back to a placed op."""
        out = []
        for _, d in sorted(self.rel.rows("needs", o)):
            chain = self.chain(o, d)
            out.append(f"{pad}on device {d}:" + (" (through a loop's or branch's values)" if not chain else ""))
            out += [f"{pad}  {line}" for line in chain]
        return out

    def chain(self, o: int, d: int, limit: int = 12) -> list[str]:
        """Uses from op o's results to a use on device d that the user placed (breadth first)."""
        rel = self.rel
        start = [v for _, _, v in rel.rows("op_result", o) if rel.has("reach", v, d, cols=(0, 1))]
        seen, queue = set(start), [(v, []) for v in start]
        while queue:
            v, path = queue.pop(0)
            if len(path) >= limit:
                continue
            for q, _v in rel.rows("op_input", v, cols=(1,)):
                if rel.has("explicit", q, d, cols=(0, 1)):
                    why = rel.rows("explicit_by", q, d, cols=(0, 1))[0][2]
                    return path + [f"{self.value(v)} is read by {self.op(q)}, placed on device {d} by "
                                   + ("--assign" if why == "name" else why)]
                if rel.has("free", q):
                    for _q, _k, r in rel.rows("op_result", q):
                        if r not in seen and rel.has("reach", r, d, cols=(0, 1)):
                            seen.add(r)
                            queue.append((r, path + [f"{self.value(v)} is read by {self.op(q)} (placed by the "
                                                     "rules where its results are used)"]))
            for f, i, u in self.facts.rows("func_return"):
                if f == self.entry and self.rep(u) == v and rel.has("result_hint", f, i, d, cols=(0, 1, 2)):
                    return path + [f"{self.value(v)} is result {i} of @{f}, placed on device {d}"]
            for t, dd in self.engine.read("op_request"):
                if dd == d and any(self.rep(u) == v for _t, _i, u in rel.rows("op_operand", t)):
                    return path + [f"{self.value(v)} is asked for on device {d} by {self.op(t)}"]
        return []

    # ---- where a value is, and why it travels
    def whereabouts(self, v: int, pad: str) -> list[str]:
        rel = self.rel
        r = self.rep(v)
        out = []
        if r != v:
            out.append(f"{pad}stands for {self.value(r)} (a sharding annotation or a loop-invariant slot)")
        on = [d for _, d in rel.rows("avail", r)]
        if on:
            out.append(f"{pad}is on {self.devices(on)} without a transfer")
        for _, s, d in sorted(rel.rows("channel", r)):
            out.append(f"{pad}sent {s} -> {d} on channel {self.channel_ids[(r, s, d)]}: " + self.channel_text(r, s, d))
            out += [f"{pad}  {line}" for line in self.needed_on(r, d)]
        for t, s, d, w in self.engine.read("rides_with"):
            if t == r:
                out.append(f"{pad}a token: rides to device {d} with {self.value(w)}'s transfer (its recv follows "
                           "the effect)")
        for _, d, kind in rel.rows("move", r):
            out.append(f"{pad}moved to {kind} memory on device {d}")
        return out

    def channel_text(self, v: int, s: int, d: int) -> str:
        kind = self.rel.rows("channel_kind", v)[0][1]
        wire = self.rel.rows("wire_type", v)
        nbytes = self.rel.rows("channel_bytes", v, s, d, cols=(0, 1, 2))
        what = "a control transfer (an empty message after the effect)" if kind == "control" else \
            f"as {wire[0][1] if wire else '?'}"
        hop = self.rel.rows("hop", v, d, cols=(0, 1))
        chained = f", forwarded by device {s} (chain hop {hop[0][2]})" if hop and hop[0][2] > 0 else ""
        return f"{what}, {nbytes[0][3] if nbytes else '?'} bytes a message{chained}"

    def needed_on(self, v: int, d: int) -> list[str]:
        """Why device d needs v: its readers there."""
        rel = self.rel
        out = []
        for q, _v in rel.rows("op_input", v, cols=(1,)):
            if rel.has("placed", q, d, cols=(0, 1)):
                out.append(f"read there by {self.op(q)}")
        for f, i, u in self.facts.rows("func_return"):
            if f == self.entry and self.rep(u) == v and rel.has("result_loc", f, i, d, cols=(0, 1, 2)):
                out.append(f"delivered there as result {i} of @{f}")
        for w, k, dd in self.engine.read("carrier"):
            if dd == d and any(self.rep(u) == v for _w, kk, u in rel.rows("op_operand", w) if kk == k):
                out.append(f"carried there by {self.op(w)} (slot {k})")
        return out[:6] + ([f"... and {len(out) - 6} more"] if len(out) > 6 else [])

    # ---- the whole answer
    def explain_value(self, v: int, label: str) -> str:
        lines = []
        if v in self.args:
            i = self.args[v]
            hint = self.rel.rows("arg_hint", self.entry, i, cols=(0, 1))
            lines.append(f"{label}: argument {i} of @{self.entry}")
            lines.append("  placed on device %d by its sharding" % hint[0][2] if hint else
                         "  not placed: the caller feeds it to each device that reads it")
        else:
            o, k = self.result_of.get(v, (None, None))
            if o is None:
                owner = owning_op(self.facts.values[v])
                lines.append(f"{label}: a block argument of {owner.name} ({format_location(owner.location, self.filename)})")
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
        loc = self.rel.rows("result_loc", self.entry, i, cols=(0, 1))
        hint = self.rel.has("result_hint", self.entry, i, cols=(0, 1))
        d = loc[0][2] if loc else "?"
        why = "its sharding places it there" if hint else "where its value naturally is (the smallest such device)"
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
        rows = [("placed", r) for r in ex.rel.rows("placed", o)] if o is not None else []
        rows += [("channel", r) for r in ex.rel.rows("channel", ex.rep(v))]
        for relation, row in rows:
            out.append(explain(engine, relation, row, max_depth=depth, follow=CHAIN_RELATIONS).format())
    return "".join(out)
