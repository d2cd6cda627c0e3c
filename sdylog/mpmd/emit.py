"""Writes a Plan into IR: one `func.func @<entry>.devN` per device.

Each device's function holds, in program order, the ops placed on it
(cloned, operands remapped to the device's copies), the sends and recvs of
its channels where the plan fires them (`stablehlo.send` / `recv`, type-1
channel handles, `source_target_pairs`), threaded on one token chain, the
casts of bf16 transfers, the memory moves, and its own copy of each
spanning while, case or if. Nothing is decided here."""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_dialect

from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.ir.rewrite import create_op
from sdylog.ir.types import num_elements
from sdylog.ir.walk import walk_ops
from sdylog.mpmd.hints import DEVICE_ATTR
from sdylog.mpmd.plan import Channel, Plan
from sdylog.mpmd.prepare import CALLS, SCOPE

# Placement attributes the device programs no longer need.
_PLACEMENT_ATTRS = ("sdy.sharding", "mhlo.sharding", DEVICE_ATTR, SCOPE, CALLS)
_TOKEN = "!stablehlo.token"


class _Source:
    """The prepared input, indexed for the emitter."""

    def __init__(self, plan: Plan):
        facts = plan.facts
        self.facts = facts
        self.children = defaultdict(list)      # (op id, region) -> op ids, in program order
        order = {op: o for op, _k, _f, o in facts.rows("op")}
        for op, parent, region in sorted(facts.rows("op_in"), key=lambda r: order[r[0]]):
            self.children[(parent, region)].append(op)
        self.block_args = defaultdict(dict)    # (op id, region) -> {index: value id}
        for op, region, i, v in facts.rows("block_arg"):
            self.block_args[(op, region)][i] = v
        self.yields = defaultdict(dict)        # (op id, region) -> {index: value id}
        for op, region, i, v in facts.rows("region_yield"):
            self.yields[(op, region)][i] = v
        self.operands = defaultdict(dict)      # op id -> {index: value id}
        for op, i, v in facts.rows("op_operand"):
            self.operands[op][i] = v
        self.results = defaultdict(dict)       # op id -> {index: value id}
        for op, i, v in facts.rows("op_result"):
            self.results[op][i] = v
        self.returns = {i: v for f, i, v in facts.rows("func_return") if f == plan.entry}
        self.func_id = next(i for i, op in enumerate(facts.ops) if op.name == "func.func"
                            and ir.StringAttr(op.attributes["sym_name"]).value == plan.entry)
        # the regions (structural op, device) that hold a send or recv of the device: they thread its token
        self.talks = set()
        parent = {op: p for op, p, _r in facts.rows("op_in")}
        for ch in plan.channels:
            op = ch.after if ch.kind != "predicate" else ch.value   # (a lazy recv is in the same region)
            if ch.kind == "predicate":
                self.talks.update({(op, ch.src), (op, ch.dst)})
            while op in parent:
                op = parent[op]
                if op in plan.regions:
                    self.talks.update({(op, ch.src), (op, ch.dst)})


def emit(plan: Plan, name: str | None = None) -> ir.Module:
    """The module of per-device functions (in the plan's context)."""
    src = _Source(plan)
    loc = plan.facts.ops[src.func_id].location
    module = ir.Module.create(loc)
    if name:
        module.operation.attributes["sym_name"] = ir.StringAttr.get(name)
    with loc:   # (types are built with a location for their diagnostics)
        for d in plan.devices:
            _Device(plan, src, d).build(module)
    return module


class _Scopes:
    """Original value -> this device's copy, scoped by region (a region's
    values are not seen after it). Keys: a value id, ("moved", id, kind),
    ("wire", id) (a received payload before its cast back, for forwarding)."""

    def __init__(self):
        self.stack = [{}]

    def get(self, key):
        for scope in reversed(self.stack):
            if key in scope:
                return scope[key]
        return None

    def set(self, key, value):
        self.stack[-1][key] = value

    def push(self):
        self.stack.append({})

    def pop(self):
        self.stack.pop()


class _Device:
    def __init__(self, plan: Plan, src: _Source, d: int):
        self.plan, self.src, self.d = plan, src, d
        self.facts = plan.facts
        self.local = _Scopes()
        self.chain = None          # the device's current token
        self.entry_block = None
        self.block = None
        self.token_type = ir.Type.parse(_TOKEN)

    # ---------------------------------------------------------------- values
    def read(self, vid: int, kind: str | None = None, where=None):
        r = self.plan.of(vid)
        if kind is not None and kind in self.plan.moves.get((r, self.d), ()):
            got = self.local.get(("moved", r, kind))
            if got is not None:
                return got
        got = self.local.get(r)
        if got is None:
            site = where if where is not None else self.facts.ops[self.src.func_id]
            raise SdylogError(f"internal error: device {self.d} has no copy of value #{r} "
                              f"({self.facts.values[r].type})", format_location(site))
        return got

    def define(self, vid: int, value, loc) -> None:
        """v's copy on this device, and its moves to other memories."""
        r = self.plan.of(vid)
        self.local.set(r, value)
        for kind in self.plan.moves.get((r, self.d), ()):
            moved = create_op("stablehlo.custom_call", results=[value.type], operands=[value], attributes={
                "call_target_name": ir.StringAttr.get("annotate_device_placement"),
                "has_side_effect": ir.BoolAttr.get(True),
                "mhlo.frontend_attributes": ir.DictAttr.get({"_xla_buffer_placement": ir.StringAttr.get(kind)})},
                loc=loc, ip=self.ip())
            self.local.set(("moved", r, kind), moved.result)

    def ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.block)

    def token(self):
        """The current token, starting the chain at the function's entry if it has none yet."""
        if self.chain is None:
            first = next(iter(self.entry_block.operations), None)
            ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(self.entry_block)
            self.chain = create_op("stablehlo.after_all", results=[self.token_type], loc=self.loc(-1), ip=ip).result
        return self.chain

    def loc(self, op_id: int):
        return self.facts.ops[op_id if op_id >= 0 else self.src.func_id].location

    # ---------------------------------------------------------------- the function
    def build(self, module) -> None:
        plan, facts = self.plan, self.facts
        fn_src = facts.ops[self.src.func_id]
        ftype = ir.FunctionType(ir.TypeAttr(fn_src.attributes["function_type"]).value)
        args = [i for i, devs in enumerate(plan.arg_fed) if self.d in devs]
        results = [i for i, d in enumerate(plan.result_loc) if d == self.d]
        fn = func_dialect.FuncOp(f"{plan.entry}.dev{self.d}",
                                 ir.FunctionType.get([ftype.inputs[i] for i in args],
                                                     [ftype.results[i] for i in results]),
                                 loc=fn_src.location, ip=ir.InsertionPoint(module.body))
        fn.attributes[DEVICE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.d)
        self._signature_attrs(fn, args, results)
        self.entry_block = self.block = fn.add_entry_block(arg_locs=[fn_src.location] * len(args))
        func_args = {i: v for f, i, v in facts.rows("func_arg") if f == plan.entry}
        for pos, i in enumerate(args):
            self.define(func_args[i], self.entry_block.arguments[pos], self.loc(-1))
        self.fire(self.src.func_id)   # (a function argument's transfers: keyed by the function's op)
        self.region(self.src.children[(self.src.func_id, 0)])
        out = [self.read(self.src.returns[i], plan.result_memory.get(i)) for i in results]
        create_op("func.return", operands=out, loc=fn_src.location, ip=self.ip())

    def _signature_attrs(self, fn, args: list, results: list) -> None:
        def memory(kinds: dict, indices: list):
            return ir.ArrayAttr.get([ir.DictAttr.get({"mhlo.memory_kind": ir.StringAttr.get(kinds[i])}
                                                     if i in kinds else {}) for i in indices])
        if any(i in self.plan.arg_memory for i in args):
            fn.attributes["arg_attrs"] = memory(self.plan.arg_memory, args)
        if any(i in self.plan.result_memory for i in results):
            fn.attributes["res_attrs"] = memory(self.plan.result_memory, results)

    # ---------------------------------------------------------------- regions
    def region(self, op_ids: list) -> None:
        """The ops of one region that this device runs, and its events after each."""
        plan = self.plan
        for op_id in op_ids:
            self.fire(op_id, "before")
            if op_id in plan.regions:
                if self.d in plan.regions[op_id].participants:
                    self.control_flow(op_id)
            elif self.d in plan.placed.get(op_id, ()):
                self.clone(op_id)
            self.fire(op_id)

    def clone(self, op_id: int) -> None:
        op = self.facts.ops[op_id]
        new = op.clone(ip=self.ip())
        kinds = self.plan.reads_kind
        value_ids = self.facts.value_ids
        for i, v in self.src.operands[op_id].items():
            new.operands[i] = self.read(v, kinds.get((op_id, self.plan.of(v))), op)
        for nested in walk_ops(new):
            for a in _PLACEMENT_ATTRS:
                if a in nested.attributes:
                    del nested.attributes[a]
            if nested == new:
                continue
            for i, u in enumerate(nested.operands):
                v = value_ids.get(u)
                if v is not None:   # a value of the input captured from outside the op
                    nested.operands[i] = self.read(v, kinds.get((op_id, self.plan.of(v))), op)
        for i, v in self.src.results[op_id].items():
            self.define(v, new.results[i], op.location)

    def fire(self, op_id: int, when: str = "after") -> None:
        """This device's sends and recvs that fire `when` ("after", "before") op `op_id`."""
        for ch, role in self.plan.events.get((when, op_id), ()):
            if role == "send" and ch.src == self.d:
                self.send(ch)
            elif role == "recv" and ch.dst == self.d:
                self.recv(ch)

    # ---------------------------------------------------------------- channels
    def _channel_attrs(self, ch: Channel) -> dict:
        return {"channel_handle": ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {ch.id}, type = 1>"),
                "is_host_transfer": ir.BoolAttr.get(False),
                "source_target_pairs": ir.Attribute.parse(f"dense<[[{ch.src}, {ch.dst}]]> : tensor<1x2xi64>")}

    def send(self, ch: Channel, payload=None) -> None:
        loc = self.loc(ch.after)
        tokens = [self.token()]
        if payload is not None:   # (a loop predicate)
            pass
        elif ch.kind == "control":
            tokens.append(self.read(ch.value))
            payload = create_op("stablehlo.constant", results=[_empty_f32()],
                                attributes={"value": ir.Attribute.parse("dense<> : tensor<0xf32>")},
                                loc=loc, ip=self.ip()).result
        elif ch.members:
            flat = [self.flat(self.read(v, "device"), loc) for v in ch.members]
            joined = create_op("stablehlo.concatenate", results=[_tensor(ch.shape, ch.elem_type)], operands=flat,
                               attributes={"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)},
                               loc=loc, ip=self.ip()).result
            payload = self.to_wire(joined, ch, loc)
        else:
            payload = self.local.get(("wire", ch.value))
            if payload is None:
                payload = self.to_wire(self.read(ch.value, "device"), ch, loc)
            tokens += [self.read(t) for t in ch.riders]
        token = tokens[0] if len(tokens) == 1 else create_op(
            "stablehlo.after_all", results=[self.token_type], operands=tokens, loc=loc, ip=self.ip()).result
        self.chain = create_op("stablehlo.send", results=[self.token_type], operands=[payload, token],
                               attributes=self._channel_attrs(ch), loc=loc, ip=self.ip()).result

    def recv(self, ch: Channel, payload_type=None):
        loc = self.loc(ch.after)
        if payload_type is None:
            payload_type = _empty_f32() if ch.kind == "control" else _tensor(ch.shape, ch.wire_type)
        op = create_op("stablehlo.recv", results=[payload_type, self.token_type], operands=[self.token()],
                       attributes=self._channel_attrs(ch), loc=loc, ip=self.ip())
        payload, self.chain = op.results[0], op.results[1]
        if ch.kind == "control":
            self.define(ch.value, self.chain, loc)
        elif ch.members:
            self.split(self.from_wire(payload, ch, loc), ch, loc)
        elif ch.kind == "data":
            self.local.set(("wire", ch.value), payload)
            self.define(ch.value, self.from_wire(payload, ch, loc), loc)
            for t in ch.riders:
                self.define(t, self.chain, loc)
        return payload

    def flat(self, value, loc):
        """A value as a 1-d tensor (what merged transfers concatenate)."""
        t = ir.RankedTensorType(value.type)
        return _op1("stablehlo.reshape", _tensor((num_elements(t),), str(t.element_type)), [value], loc, self.ip())

    def split(self, joined, ch: Channel, loc) -> None:
        """The merged values back out of their flat tensor."""
        offset = 0
        for v in ch.members:
            t = self.facts.values[v].type
            n = num_elements(t)
            piece = create_op("stablehlo.slice", results=[_tensor((n,), ch.elem_type)], operands=[joined], attributes={
                "start_indices": ir.DenseI64ArrayAttr.get([offset]), "limit_indices": ir.DenseI64ArrayAttr.get([offset + n]),
                "strides": ir.DenseI64ArrayAttr.get([1])}, loc=loc, ip=self.ip()).result
            self.define(v, _op1("stablehlo.reshape", t, [piece], loc, self.ip()), loc)
            offset += n

    def to_wire(self, value, ch: Channel, loc):
        if ch.wire_type == ch.elem_type:
            return value
        return to_bf16(value, ch.shape, self.plan.bf16, loc, self.ip())

    def from_wire(self, payload, ch: Channel, loc):
        if ch.wire_type == ch.elem_type:
            return payload
        return _op1("stablehlo.convert", _tensor(ch.shape, ch.elem_type), [payload], loc, self.ip())

    # ---------------------------------------------------------------- control flow
    def control_flow(self, w: int) -> None:
        region = self.plan.regions[w]
        kind = self.facts.ops[w].name
        threads = (w, self.d) in self.src.talks
        if kind == "stablehlo.while":
            self.emit_while(w, region, threads)
        else:
            self.emit_branches(w, region, threads)

    def condition(self, w: int, slots: dict):
        """The leader's copy of while w's condition on `slots` (slot -> value): its predicate."""
        self.local.push()
        for k, value in slots.items():
            self.local.set(self.plan.of(self.src.block_args[(w, 0)][k]), value)
        for op_id in self.src.children[(w, 0)]:
            if op_id in self.plan.placed:
                self.clone(op_id)
        p = self.read(self.src.yields[(w, 0)][0])
        self.local.pop()
        return p

    def predicate(self, w: int, region, slots: dict):
        """The loop predicate on this device: computed by the leader and sent, received by the others."""
        if self.d == region.leader:
            p = self.condition(w, slots)
            for d in sorted(region.predicate):
                self.send(region.predicate[d], payload=p)
            return p
        return self.recv(region.predicate[self.d], payload_type=_tensor((), "i1"))

    def emit_while(self, w: int, region, threads: bool) -> None:
        src, op = self.src, self.facts.ops[w]
        carried = region.carried(self.d)
        inits = [self.read(src.operands[w][k], where=op) for k in carried]
        lead = [self.predicate(w, region, dict(zip(carried, inits)))] if region.spanning else []
        if threads:
            lead.append(self.token())
        operands = lead + inits
        types = [v.type for v in operands]
        new = create_op("stablehlo.while", results=types, operands=operands, regions=2, loc=op.location,
                        ip=self.ip())
        outer_block, outer_chain = self.block, self.chain
        cond = new.regions[0].blocks.append(*types)
        body = new.regions[1].blocks.append(*types)
        n = len(lead)
        self.block = cond
        if region.spanning:
            p = cond.arguments[0]
        else:
            p = self.condition(w, {k: cond.arguments[n + j] for j, k in enumerate(carried)})
        create_op("stablehlo.return", operands=[p], loc=op.location, ip=self.ip())

        self.block = body
        self.local.push()
        if threads:
            self.chain = body.arguments[n - 1]
        for j, k in enumerate(carried):
            self.define(src.block_args[(w, 1)][k], body.arguments[n + j], op.location)
        self.region(src.children[(w, 1)])
        yields = [self.read(src.yields[(w, 1)][k], where=op) for k in carried]
        out = [self.predicate(w, region, dict(zip(carried, yields)))] if region.spanning else []
        if threads:
            out.append(self.chain)
        create_op("stablehlo.return", operands=out + yields, loc=op.location, ip=self.ip())
        self.local.pop()

        self.block, self.chain = outer_block, outer_chain
        if threads:
            self.chain = new.results[n - 1]
        for j, k in enumerate(carried):
            self.define(src.results[w][k], new.results[n + j], op.location)

    def emit_branches(self, w: int, region, threads: bool) -> None:
        """This device's case (or if): every branch with its own ops, the carried results."""
        src, op = self.src, self.facts.ops[w]
        carried = region.carried(self.d)
        selector = self.read(src.operands[w][0], where=op)
        types = ([self.token_type] if threads else []) + [self.facts.values[src.results[w][k]].type for k in carried]
        n_regions = len(op.regions)
        outer_block, outer_chain = self.block, self.chain
        if threads:
            outer_chain = self.token()
        new = create_op(op.name, results=types, operands=[selector], regions=n_regions, loc=op.location,
                        ip=self.ip())
        for b in range(n_regions):
            self.block = new.regions[b].blocks.append()
            self.chain = outer_chain
            self.local.push()
            self.region(src.children[(w, b)])
            out = ([self.chain] if threads else []) + [self.read(src.yields[(w, b)][k], where=op) for k in carried]
            create_op("stablehlo.return", operands=out, loc=op.location, ip=self.ip())
            self.local.pop()
        self.block, self.chain = outer_block, outer_chain
        if threads:
            self.chain = new.results[0]
        for j, k in enumerate(carried):
            self.define(src.results[w][k], new.results[j + int(threads)], op.location)


def to_bf16(value, shape, mode: str, loc, ip):
    """An f32 tensor as bf16: rounded to nearest even (stablehlo.convert, what
    XLA does) or truncated to its top 16 bits (TF's cast of bf16 transfers)."""
    if mode != "truncate":
        return _op1("stablehlo.convert", _tensor(shape, "bf16"), [value], loc, ip)
    u32 = _tensor(shape, "ui32")
    bits = _op1("stablehlo.bitcast_convert", u32, [value], loc, ip)
    sixteen = create_op("stablehlo.constant", results=[u32], attributes={
        "value": ir.DenseElementsAttr.get_splat(u32, ir.IntegerAttr.get(ir.IntegerType.get_unsigned(32), 16))},
        loc=loc, ip=ip).result
    high = _op1("stablehlo.shift_right_logical", u32, [bits, sixteen], loc, ip)
    u16 = _op1("stablehlo.convert", _tensor(shape, "ui16"), [high], loc, ip)
    return _op1("stablehlo.bitcast_convert", _tensor(shape, "bf16"), [u16], loc, ip)


def _op1(name: str, result_type, operands: list, loc, ip):
    return create_op(name, results=[result_type], operands=operands, loc=loc, ip=ip).result


def _tensor(shape, elem: str) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), ir.Type.parse(elem))


def _empty_f32() -> ir.RankedTensorType:
    return _tensor((0,), "f32")
