"""The placement facts of rules/mpmd/schema.dl, read beside the program
facts of sdylog/facts (same op and value ids): device hints, named scopes,
memory kinds, side effects, tokens, element counts, existing channels
(mpmd_facts); and the placements alone of a module as read, what
rules/mpmd/kind.dl tells an MPMD module from an SPMD one by
(placement_facts)."""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from sdylog.facts.extract import FactSet
from sdylog.ir.diagnostics import error_at
from sdylog.ir.shardings import Meshes, func_type, per_value
from sdylog.ir.types import element_bytes
from sdylog.ir.walk import func_ops, symbol_name, walk_ops
from sdylog.mpmd.hints import DEVICE_ATTR, is_host_callback, mhlo_devices, sharding_device
from sdylog.mpmd.prepare import CALLS, SCOPE

# Ops whose result is their operand (or that have none): annotations, not computations.
TRANSPARENT_OPS = frozenset({"sdy.sharding_constraint", "sdy.reshard", "sdy.propagation_barrier",
                             "sdy.sharding_group"})
_UNSUPPORTED_OPS = {"sdy.manual_computation": "shard_map (sdy.manual_computation) inside an MPMD program",
                    "sdy.named_computation": "a named computation left after inlining"}
# custom_call targets that move their operand between memories, and to which kind.
_MOVES = {"MoveToHost": "pinned_host", "MoveToDevice": "device"}
_HOST_KINDS = ("pinned_host", "unpinned_host")
_SIDE_EFFECT_OPS = frozenset({"stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed"})


def memory_kind(text: str) -> str:
    """A memory kind as the rules name it: host kinds are one (XLA does not tell them apart)."""
    return "pinned_host" if text in _HOST_KINDS else "device"


class _Reader:
    """`lenient`: a sharding on an unknown mesh places nothing (placement_facts:
    the run that follows says so, at its place), instead of an error."""

    def __init__(self, facts: FactSet | None, module, filename: str, lenient: bool = False):
        self.facts = facts
        self.filename = filename
        self.lenient = lenient
        self.meshes = Meshes(module)
        self.rows: dict[str, list[tuple]] = {}

    def add(self, relation: str, *row) -> None:
        self.rows.setdefault(relation, []).append(row)

    # ---- placements
    def sharding_devices(self, where, sharding) -> tuple[int | None, str | None]:
        """(device, None) for a maximal sharding, (None, mesh) for one on a mesh with axes."""
        try:
            return sharding_device(self.meshes, sharding)
        except KeyError:
            if self.lenient:
                return None, None
            raise error_at(where, "sharding on an unknown mesh", self.filename) from None

    def func_hint(self, fn) -> None:
        if DEVICE_ATTR in fn.attributes:
            self.add("func_hint", symbol_name(fn), ir.IntegerAttr(fn.attributes[DEVICE_ATTR]).value)

    def host_callback(self, op_id: int, op) -> None:
        if is_host_callback(op):
            self.add("host_callback", op_id)

    def op_hints(self, op_id: int, op, name: str, attrs) -> None:
        if "sdy.sharding" in attrs and name not in TRANSPARENT_OPS:
            shardings = per_value(attrs["sdy.sharding"])
            results = list(op.results)
            data = [i for i, r in enumerate(results) if not _is_token(r.type)]
            # (a token result's sharding is ignored when the op has other results)
            keep = data if data and len(data) < len(results) else range(len(shardings))
            for i in keep:
                if i < len(shardings):
                    d, mesh = self.sharding_devices(op, shardings[i])
                    if d is not None:
                        self.add("op_hint", op_id, d, "sdy.sharding")
                    elif mesh is not None:
                        self.add("spmd_sharding", op_id, mesh)
        if "mhlo.sharding" in attrs:
            devices, spmd = mhlo_devices(ir.StringAttr(attrs["mhlo.sharding"]).value)
            if spmd:
                self.add("spmd_sharding", op_id, "mhlo.sharding")
            for d in sorted(set(devices)):
                self.add("op_hint", op_id, d, "mhlo.sharding")
        if DEVICE_ATTR in attrs:
            self.add("op_hint", op_id, ir.IntegerAttr(attrs[DEVICE_ATTR]).value, DEVICE_ATTR)
        if CALLS in attrs:
            for level, (kind, name, d) in enumerate(ir.ArrayAttr(attrs[CALLS])):
                self.add("call_hint", op_id, level, ir.IntegerAttr(d).value, ir.StringAttr(kind).value,
                         ir.StringAttr(name).value)
        if SCOPE in attrs:
            for depth, name in enumerate(ir.ArrayAttr(attrs[SCOPE])):
                self.add("op_scope", op_id, ir.StringAttr(name).value, depth)

    def transparent(self, op_id: int, op, name: str, attrs) -> None:
        self.add("transparent", op_id)
        if "sharding" in attrs:
            d, mesh = self.sharding_devices(op, attrs["sharding"])
            if d is not None:
                self.add("op_request", op_id, d)
            elif mesh is not None:
                self.add("spmd_sharding", op_id, mesh)

    # ---- effects and memory
    def op_kind_facts(self, op_id: int, op, name: str, attrs) -> None:
        effect = name in _SIDE_EFFECT_OPS or ("has_side_effect" in attrs and _truthy(attrs["has_side_effect"]))
        if effect:
            self.add("side_effect", op_id)
        if name in ("stablehlo.send", "stablehlo.recv") and "channel_handle" in attrs:
            h = stablehlo.ChannelHandle(attrs["channel_handle"])
            self.add("existing_channel", op_id, h.handle, h.channel_type)
        if name == "stablehlo.custom_call":
            target = ir.StringAttr(attrs["call_target_name"]).value
            if target in _MOVES:
                self.add("memory_move", op_id, _MOVES[target])
            elif target == "annotate_device_placement":
                placement = _frontend(attrs, "_xla_buffer_placement")
                if placement is not None:
                    self.add("memory_move", op_id, memory_kind(placement))
        if _frontend(attrs, "_xla_compute_type") == "host":
            self.add("host_compute", op_id)

    # ---- a function's signature (mpmd_facts: the entry function's)
    def signature(self, fn, name: str) -> None:
        ftype = func_type(fn)
        for key, count, hint, spmd, memory in (
                ("arg_attrs", len(ftype.inputs), "arg_hint", "spmd_arg_sharding", "arg_memory"),
                ("res_attrs", len(ftype.results), "result_hint", "spmd_arg_sharding", "result_memory")):
            if key not in fn.attributes:
                continue
            for i, d in enumerate(ir.ArrayAttr(fn.attributes[key])):
                d = ir.DictAttr(d)
                if "sdy.sharding" in d:
                    dev, mesh = self.sharding_devices(fn, d["sdy.sharding"])
                    if dev is not None:
                        self.add(hint, name, i, dev)
                    elif mesh is not None and key == "arg_attrs":
                        self.add(spmd, name, i, mesh)
                if "mhlo.sharding" in d:
                    devices, is_spmd = mhlo_devices(ir.StringAttr(d["mhlo.sharding"]).value)
                    for dev in devices[:1]:
                        self.add(hint, name, i, dev)
                    if is_spmd and key == "arg_attrs":
                        self.add(spmd, name, i, "mhlo.sharding")
                kinds = set()
                if "mhlo.memory_kind" in d:
                    kinds.add(memory_kind(ir.StringAttr(d["mhlo.memory_kind"]).value))
                placement = _frontend(d, "_xla_buffer_placement")
                if placement is not None:
                    kinds.add(memory_kind(placement))
                for k in sorted(kinds):
                    self.add(memory, name, i, k)

    # ---- values
    def values(self) -> None:
        elem_types = {}   # element type name -> bytes
        for vid, v in enumerate(self.facts.values):
            t = v.type
            if _is_token(t):
                self.add("token_value", vid)
            elif isinstance(t, ir.RankedTensorType):
                if not t.has_static_shape:   # (one of static shape has a value_elems row: sdylog/facts)
                    self.add("dynamic_value", vid)
                elem_types.setdefault(str(t.element_type), element_bytes(t))
            elif isinstance(t, ir.ShapedType):
                self.add("dynamic_value", vid)
        elem_types.setdefault("bf16", 2)   # (the wire type of cast f32 transfers)
        for e, n in elem_types.items():
            self.add("elem_bytes", e, n)


def mpmd_facts(facts: FactSet, module, entry: str, filename: str) -> dict[str, list[tuple]]:
    """The rows of rules/mpmd/schema.dl's relations (but the run's options)."""
    r = _Reader(facts, module, filename)
    r.add("entry_func", entry)
    for op_id, op in enumerate(facts.ops):
        name = op.name
        if name == "func.func":
            r.func_hint(op)
            if symbol_name(op) == entry:
                r.signature(op, entry)
            continue
        if name in _UNSUPPORTED_OPS:
            raise error_at(op, f"cannot partition {_UNSUPPORTED_OPS[name]}", filename)
        attrs = op.attributes
        if name in TRANSPARENT_OPS:
            r.transparent(op_id, op, name, attrs)
            continue
        r.op_hints(op_id, op, name, attrs)
        r.host_callback(op_id, op)
        r.op_kind_facts(op_id, op, name, attrs)
    r.values()
    attrs = module.operation.attributes   # (the device count they give: rules/mpmd/devices.dl)
    for relation, attr in (("module_partitions", "mhlo.num_partitions"), ("module_replicas", "mhlo.num_replicas")):
        if attr in attrs:
            r.add(relation, ir.IntegerAttr(attrs[attr]).value)
    return r.rows


def placement_facts(module, filename: str = "-") -> dict[str, list[tuple]]:
    """The rows of the placement relations (op_hint, op_request, arg_hint,
    result_hint, func_hint, host_callback; and those mpmd_facts writes beside
    them), and the readers of each constraint or reshard asking for a device
    (request_reader), of every function of `module` as it is read, calls not inlined,
    op ids in walk order: what rules/mpmd/kind.dl classifies a module by. A
    sharding on an unknown mesh places nothing here (lenient)."""
    r = _Reader(None, module, filename, lenient=True)
    op_id = 0
    requested = {}   # the result of a constraint or reshard with an op_request row -> its op id
    for fn in func_ops(module):
        for op in walk_ops(fn):   # (the function first)
            name = op.name
            for v in op.operands:
                if v in requested:
                    r.add("request_reader", requested[v], op_id)
            if name == "func.func":
                r.func_hint(op)
                r.signature(op, symbol_name(op))
            elif name in TRANSPARENT_OPS:
                asked = len(r.rows.get("op_request", ()))
                r.transparent(op_id, op, name, op.attributes)
                if len(r.rows.get("op_request", ())) > asked:
                    requested.update((res, op_id) for res in op.results)
            else:
                r.op_hints(op_id, op, name, op.attributes)
                r.host_callback(op_id, op)
            op_id += 1
    return r.rows


def _is_token(t) -> bool:
    return str(t) == "!stablehlo.token"


def _truthy(attr) -> bool:
    return ir.BoolAttr(attr).value if isinstance(attr, ir.BoolAttr) else True


def _frontend(attrs, key: str) -> str | None:
    if "mhlo.frontend_attributes" not in attrs:
        return None
    fa = ir.DictAttr(attrs["mhlo.frontend_attributes"])
    return ir.StringAttr(fa[key]).value if key in fa else None
