"""`sdylog simulate` on a module whose ops are placed on devices: the MPMD
partition run on simulated devices, against the unpartitioned program.

1. Random inputs for the entry function (from the seed).
2. The prepared program (calls inlined) runs on one device: the reference.
3. `sdylog mpmd`'s partition: each device runs its function on the inputs
   fed to it (the manifest's argument map), joined by point-to-point
   channels (buffered or rendezvous, sdylog/simulate/p2p.py).
4. The results, gathered by the manifest's result map, are compared with the
   reference: bitwise without casts; with bf16 transfers, bitwise with a
   reference that rounds the same values where the partition does.

A deadlock is a report, never a hang. Bytes are counted per channel and
per device. A module of per-device functions (`sdylog.device` attributes,
as `sdylog mpmd` writes them) runs as it is, without a comparison.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.ir.walk import func_ops, symbol_name
from sdylog.simulate.dtypes import is_complex, is_float
from sdylog.simulate.mesh import CollectiveStats, DeviceRun, run_on_devices
from sdylog.simulate.p2p import DeadlockError, P2PCommunicator
from sdylog.simulate.program import DeviceRuntime, Program

# A module holds device placements: maximal shardings, sdylog.device attributes.
_PLACEMENTS = re.compile(r"maximal device\s*=|sdylog\.device|device_ids\s*=\s*\[\s*\d+\s*\]\s*>")


def has_device_placements(text: str) -> bool:
    return bool(_PLACEMENTS.search(text))


def wants_mpmd(path: str, mpmd_options: dict) -> bool:
    """`sdylog simulate` runs the MPMD partition: the module places ops on
    devices (not only JAX's host callbacks: sdylog.mpmd.hints.places_on_devices),
    or --assign places named computations."""
    from sdylog.mpmd.hints import places_on_devices
    if mpmd_options.get("assign"):
        return True
    text = read_source(path)
    return has_device_placements(text) and places_on_devices(parse_module(text, display_name(path)))


@dataclass
class MpmdReport:
    devices: list
    mode: str
    channels: list = field(default_factory=list)      # manifest rows + messages and bytes moved
    bytes_per_device: dict = field(default_factory=dict)
    # (index, shape, bitwise equal to the reference (with the partition's casts), max abs error vs the original)
    outputs: list = field(default_factory=list)
    casts: bool = False
    approximate: bool = False      # with casts the reference could not round as the partition does
    regrouped: bool = False        # --reduce-locally regrouped sums: compared with the regrouped program
    compared: bool = True
    deadlock: str | None = None
    errors: list = field(default_factory=list)        # unconsumed messages
    trace: list = field(default_factory=list)
    results: list = field(default_factory=list)       # the partition's results, by the result map
    inputs: list = field(default_factory=list)        # the entry's random inputs
    skipped: list = field(default_factory=list)       # program.SkippedOp: host callbacks without results, not run

    @property
    def total_bytes(self) -> int:
        return sum(c["bytes"] for c in self.channels)

    @property
    def match(self) -> bool:
        return self.deadlock is None and not self.errors and all(ok for _, _, ok, _ in self.outputs)

    @property
    def max_abs_error(self) -> float:
        return max((e for *_, e in self.outputs), default=0.0)

    def json(self) -> dict:
        out = {"match": self.match, "max_abs_error": self.max_abs_error, "channels": self.channels,
               "bytes_per_device": {str(d): v for d, v in sorted(self.bytes_per_device.items())},
               "total_bytes": self.total_bytes, "skipped": [op.json() for op in self.skipped]}
        if self.deadlock:
            out["deadlock"] = self.deadlock
        if self.errors:
            out["errors"] = self.errors
        return out

    def text(self) -> str:
        lines = [f"devices: {len(self.devices)} ({self.mode} channels)", ""]
        if self.channels:
            lines.append(f"{'channel':>7}  {'src':>3}  {'dst':>3}  {'kind':<9} {'dtype':<6} {'shape':<14} "
                         f"{'messages':>8}  {'bytes':>10}")
            for c in self.channels:
                lines.append(f"{c['id']:>7}  {c['src']:>3}  {c['dst']:>3}  {c['role']:<9} {c['dtype']:<6} "
                             f"{str(c['shape']):<14} {c['messages']:>8}  {c['bytes']:>10}")
        else:
            lines.append("no channels")
        lines.append("")
        for d in sorted(self.bytes_per_device):
            b = self.bytes_per_device[d]
            lines.append(f"device {d}: sent {b['sent']} B, received {b['received']} B")
        lines.append(f"total: {self.total_bytes} B")
        lines.append("")
        if self.deadlock:
            lines += [self.deadlock, "", "FAIL: deadlock"]
            return "\n".join(lines)
        lines += [f"error: {e}" for e in self.errors]
        if not self.compared:
            lines.append("ran to the end" if not self.errors else "FAIL")
            return "\n".join(lines)
        how = ("bitwise" if not self.casts else "within bf16 precision" if self.approximate
               else "bitwise, with the partition's bf16 roundings")
        if self.regrouped:
            how += ", sums added in the partition's order"
        for i, shape, ok, err in self.outputs:
            lines.append(f"result #{i} {list(shape)}: {'ok' if ok else 'MISMATCH'} ({how}; max abs error "
                         f"{err:.3g})")
        lines += [op.text() for op in self.skipped]
        lines.append("")
        lines.append("PASS: the partitioned and unpartitioned programs agree" if self.match else
                     "FAIL: the partitioned and unpartitioned programs differ")
        return "\n".join(lines)


def simulate_mpmd_text(text: str, filename: str, options=None, seed: int = 0, mode: str = "buffered") -> MpmdReport:
    from sdylog.mpmd.options import MpmdOptions
    from sdylog.mpmd.partition import partition_text
    from sdylog.simulate.simulate import random_inputs

    options = options or MpmdOptions()
    options.check_channel_mode(mode)
    part = partition_text(text, filename, options)
    plan = part.plan
    with part.source.context:
        fn = next(f for f in func_ops(part.source) if symbol_name(f) == plan.entry)
        inputs = random_inputs(fn, seed)
        # (the partitioned program's math: its sums regrouped with --reduce-locally)
        whole = Program(part.source, filename)
        exact = whole.run(plan.entry, inputs, DeviceRuntime(stats=CollectiveStats()))
        casts = any(ch.wire_type != ch.elem_type for ch in plan.channels)
        if casts:
            exact = reference_with_casts(part, filename, inputs)
    reference = exact if not casts and not plan.stats.get("sums_regrouped") else unpartitioned(
        text, filename, plan.entry, inputs)
    runs = [DeviceRun(f"{plan.entry}.dev{d}", [inputs[i] for i, devs in enumerate(plan.arg_fed) if d in devs])
            for d in plan.devices]
    report, per_device = run_devices(part.module, filename, runs, mode, part.manifest()["channels"])
    report.casts = casts
    report.regrouped = bool(plan.stats.get("sums_regrouped"))
    report.approximate = casts and exact is None
    report.inputs = inputs
    report.skipped = whole.skipped
    if report.deadlock is None:
        positions = {d: 0 for d in plan.devices}
        for i, (want, d) in enumerate(zip(reference, plan.result_loc)):
            got = per_device[d][positions[d]]
            positions[d] += 1
            report.results.append(got)
            if exact is not None:
                same, _ = compare_bitwise(got, exact[i])
            else:
                same = close_to_bf16(got, want)
            report.outputs.append((i, np.shape(want), same, compare_bitwise(got, want)[1]))
    return report


def run_devices(module, filename: str, runs: list, mode: str, channel_rows: list | None = None):
    """Run one DeviceRun per device on P2P channels: (report, per-device results)."""
    devices = list(range(len(runs)))
    report = MpmdReport(devices, mode)
    comm = P2PCommunicator(len(runs), mode)
    per_device = None
    with module.context:
        program = Program(module, filename)
        try:
            per_device = run_on_devices(program, [runs], comm=comm)[0]
        except DeadlockError as e:
            report.deadlock = e.message
    report.errors = comm.unconsumed() if report.deadlock is None else []
    report.trace = list(comm.trace)
    rows = {r["id"]: dict(r) for r in channel_rows or ()}
    sent = {d: 0 for d in devices}
    received = {d: 0 for d in devices}
    for handle, stats in sorted(comm.channels.items()):
        row = rows.pop(handle, {"id": handle, "src": stats.src, "dst": stats.dst, "kind": "data", "role": "data",
                                "dtype": "?", "shape": [], "value": "?"})
        row["bytes_per_message"] = row.get("bytes", 0)
        row["messages"], row["bytes"] = stats.messages, stats.bytes
        report.channels.append(row)
        sent[stats.src] = sent.get(stats.src, 0) + stats.bytes
        if stats.dst is not None:
            received[stats.dst] = received.get(stats.dst, 0) + stats.bytes
    for row in rows.values():   # channels of the plan that carried no message in this run
        row["bytes_per_message"], row["messages"], row["bytes"] = row.get("bytes", 0), 0, 0
        report.channels.append(row)
    report.channels.sort(key=lambda r: r["id"])
    report.bytes_per_device = {d: {"sent": sent[d], "received": received[d]} for d in devices}
    return report, per_device


def compare_bitwise(got, want) -> tuple[bool, float]:
    """(same bits, largest absolute difference)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf")
    same = got.tobytes() == want.tobytes()
    if (is_float(want.dtype) or is_complex(want.dtype)) and want.size:
        g = got.astype(np.complex128 if is_complex(want.dtype) else np.float64)
        w = want.astype(g.dtype)
        with np.errstate(all="ignore"):   # (inf - inf: a value here, as in the runs)
            diff = np.abs(g - w)
            diff = np.where(np.isnan(g) & np.isnan(w), 0, diff)
            return same, float(np.nanmax(diff)) if not same else 0.0
    return same, 0.0 if same else float(np.count_nonzero(got != want))


def unpartitioned(text: str, filename: str, entry: str, inputs: list) -> list:
    """The input program (calls inlined) run on one device."""
    from sdylog.mpmd.prepare import prepare
    module = parse_module(text, filename)
    prepare(module, filename, entry)
    with module.context:
        return Program(module, filename).run(entry, inputs, DeviceRuntime(stats=CollectiveStats()))


def close_to_bf16(got, want) -> bool:
    """Equal within what bf16 transfers can change (a few roundings of 2^-8)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(all="ignore"):   # (infinities: values here, as in the runs)
        scale = np.max(np.abs(want)) if want.size else 0.0
        return bool(np.allclose(got, want, rtol=2.0 ** -5, atol=scale * 2.0 ** -6, equal_nan=True))


def reference_with_casts(part, filename: str, inputs: list) -> list | None:
    """The unpartitioned program where every use on device d of a value that
    reaches d as bf16 reads it rounded as the partition rounds it; None when
    one program cannot say so (a reader runs on several devices, one reading
    the rounded copy, or the value is carried by a loop or branch)."""
    from sdylog.ir.rewrite import create_op
    from sdylog.ir.walk import op_list
    from sdylog.mpmd.emit import to_bf16

    plan = part.plan
    text = part.source.operation.get_asm()
    module = parse_module(text, filename, context=part.source.context)
    with module.context:
        fn = next(f for f in func_ops(module) if symbol_name(f) == plan.entry)
        ops = op_list(fn)   # pre-order: the facts' op ids (the same text, parsed again)
        index = {op: i for i, op in enumerate(ops)}
        values = {}
        for i, op in enumerate(ops):
            for k, r in enumerate(op.results):
                values[(i, k)] = r
        runs_on = {}
        for op, d in plan.engine.select("runs_on", "op", "d", ordered=True):
            runs_on.setdefault(op, set()).add(d)
        result_of = {v: (op, k) for op, k, v in plan.facts.rows("op_result")}
        arg_of = {v: i for f, i, v in plan.facts.rows("func_arg") if f == plan.entry}
        returns = {i: v for f, i, v in plan.facts.rows("func_return") if f == plan.entry}
        block = fn.regions[0].blocks[0]
        # (every use to change is found before any changes: the bindings' handles
        # of a changed op no longer hash to its index, and rounding ops are new uses)
        # (value, destination) of each value sent cast (a merged channel's values: rounding is per element)
        cast = [(v, ch.dst) for ch in plan.channels if ch.kind == "data" and ch.wire_type != ch.elem_type
                for v in ch.members or (ch.value,)]
        places, readers = [], []
        for v, _d in cast:   # (every reader found before any rounding op adds a use)
            if v in result_of:
                op_id, k = result_of[v]
                original, ip = values[(op_id, k)], ir.InsertionPoint.after(ops[op_id])
            else:
                original, ip = block.arguments[arg_of[v]], ir.InsertionPoint.at_block_begin(block)
            places.append((original, ip))
            readers.append([(u.owner.operation if hasattr(u.owner, "operation") else u.owner, u.operand_number)
                            for u in original.uses])
        changes = []
        loc = ops[0].location
        for (v, dst), (original, ip), users in zip(cast, places, readers):
            with loc:
                shape = list(ir.RankedTensorType(original.type).shape)
                rounded = create_op("stablehlo.convert", results=[original.type],
                                    operands=[to_bf16(original, shape, plan.bf16, loc, ip)], loc=loc, ip=ip).result
            for owner, i in users:
                if owner.name == "func.return":
                    if plan.result_loc[i] == dst and plan.of(returns[i]) == v:
                        changes.append((owner, i, rounded))
                    continue
                devices = runs_on.get(index.get(owner), set())
                if not devices or dst in devices and len(devices) > 1:
                    return None
                if dst in devices:
                    changes.append((owner, i, rounded))
        for owner, i, rounded in changes:
            owner.operands[i] = rounded
        return Program(module, filename).run(plan.entry, inputs, DeviceRuntime(stats=CollectiveStats()))


def simulate_emitted_text(text: str, filename: str, seed: int = 0, mode: str = "buffered") -> MpmdReport:
    """Run the per-device functions of a module `sdylog mpmd` wrote (random inputs, no comparison)."""
    from sdylog.simulate.simulate import random_inputs
    module = parse_module(text, filename)
    with module.context:
        devices = {}
        for f in func_ops(module):
            if "sdylog.device" in f.attributes:
                devices[ir.IntegerAttr(f.attributes["sdylog.device"]).value] = f
        if sorted(devices) != list(range(len(devices))) or not devices:
            raise SdylogError("the module's functions do not name devices 0..N-1 (sdylog.device attributes)")
        runs = [DeviceRun(symbol_name(devices[d]), random_inputs(devices[d], seed + d)) for d in sorted(devices)]
    report, _ = run_devices(module, filename, runs, mode)
    report.compared = False
    return report


# A function of per-device programs: `func.func @f.devN(...) attributes {sdylog.device = N : i64}`.
_EMITTED = re.compile(r"func\.func[^\n]*attributes \{[^}\n]*sdylog\.device = \d+")


def is_emitted(text: str) -> bool:
    """Whether `text` is a module `sdylog mpmd` wrote (per-device functions)."""
    return _EMITTED.search(text) is not None


def simulate_mpmd_main(path: str, options=None, **kwargs) -> MpmdReport:
    text = read_source(path)
    if is_emitted(text):
        return simulate_emitted_text(text, display_name(path), **kwargs)
    return simulate_mpmd_text(text, display_name(path), options, **kwargs)
