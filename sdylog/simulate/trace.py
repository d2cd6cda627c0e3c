"""Which op of a partitioned program first computes something else than the
unpartitioned program, and why.

Before partitioning, every op of a function body (and of the bodies of
while / case / if, the control flow both programs share) gets a location
`"sdylog.op#N"(original location)`: the passes give the ops they make or
remake the location of the op they stand for, so the op of the per-device
program that stands for op N carries that tag. Reduction bodies, sort
comparators and manual computations are not tagged: their values are
scalars or already per-device.

`Tracer` records, while a program runs, the values the tagged ops compute
(the first execution of each op: one reshard's two dynamic_slices, an
offset lookup and the data, are two records; copies, as later ops may
write into their buffers). `first_difference` walks the reference's ops in
the order they ran and compares each with what every device holds for it
under the sharding the per-device op carries (partial values of unreduced
axes reduced first, the padded tail of a non-divisible dimension left
out); for the first op that differs it tells, when it can, why: a partial
sum over some axes never reduced (an all_reduce is missing), or shards
held by the wrong devices.
"""
from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import format_location
from sdylog.ir.walk import func_ops
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding
from sdylog.partition.shards import device_groups, local_shape, shard_index

_TAG = "sdylog.op#"
_TAG_RE = re.compile(r'^loc\("sdylog\.op#(\d+)"')
_CONTROL_FLOW = {"stablehlo.while", "stablehlo.case", "stablehlo.if"}


def tag_ops(module: ir.Module) -> None:
    """Tag every op of the function bodies and control-flow bodies (see the
    module docstring), numbered in program order."""
    counter = itertools.count()
    with module.context:
        for func in func_ops(module):
            _tag_region(func.regions[0], counter)


def _tag_region(region, counter) -> None:
    for block in region.blocks:
        for op in block.operations:
            op = op.operation
            op.location = ir.Location.name(f"{_TAG}{next(counter)}", childLoc=op.location)
            if op.name in _CONTROL_FLOW:
                for r in op.regions:
                    _tag_region(r, counter)


def user_where(op, filename: str | None = None) -> str:
    """Where op is for its user, `file:line:col (jit(f)/name)`: its location
    without the tag (locations.where_text)."""
    from sdylog.ir.locations import Where, name_of, parse_location, source_of
    loc = parse_location(str(op.location))
    if getattr(loc, "name", "").startswith(_TAG):
        loc = loc.child
    src = None if loc is None else source_of(loc)
    return str(Where(None if src is None else src.text(filename), None if loc is None else name_of(loc)))


def final_shardings(module: ir.Module) -> dict[int, list]:
    """Per tag, the shardings of the results of the last op carrying it, read
    from the global program before -sdy-convert-global-to-local (which
    makes collectives without shardings): what an op's users read."""
    from sdylog.ir.walk import walk_ops
    out: dict[int, list] = {}
    for op in walk_ops(module.operation):
        tag = tag_of(op)
        if tag is not None and op.results:
            out[tag] = [_sharding_of(r) for r in op.results]
    return out


def tag_of(op) -> int | None:
    m = _TAG_RE.match(str(op.location))
    return int(m.group(1)) if m else None


@dataclass
class Traced:
    """What one op computed on one device, the first time it ran."""
    order: int                  # when, among the traced ops of that device
    op: int                     # which op of the program (Tracer.recorder's count: the same on every device)
    name: str
    values: list
    shardings: list             # TensorSharding (or None: replicated) of each result
    location: str | None


class Tracer:
    """Records the values of tagged ops (Program(..., tracer=...))."""

    def __init__(self, filename: str | None = None):
        self.filename = filename
        self.records: dict[tuple[int, int, int], Traced] = {}   # (device, tag, op) -> first run
        self._counts: dict[int, int] = {}
        self._ops = itertools.count()
        self._lock = threading.Lock()

    def recorder(self, op, slots: list[int]):
        """The step that records `op`'s results (None for an untagged op)."""
        tag = tag_of(op)
        if tag is None:
            return None
        name, where = op.name, format_location(op, self.filename)
        shardings = [_sharding_of(r) for r in op.results]
        number = next(self._ops)   # (ops are compiled in the same order on every device: one Program)

        def record(env, rt):
            key = (rt.device_id, tag, number)
            if key in self.records:
                return
            with self._lock:
                order = self._counts.get(rt.device_id, 0)
                self._counts[rt.device_id] = order + 1
            values = [np.array(env[s], copy=True) for s in slots]
            self.records[key] = Traced(order, number, name, values, shardings, where)
        return record


def _sharding_of(value) -> TensorSharding | None:
    from sdylog.ir.shardings import get_sharding
    try:
        s = get_sharding(value)
    except (KeyError, IndexError, ValueError):
        return None
    return None if s is None else TensorSharding.from_attr(s)


@dataclass(frozen=True)
class Difference:
    """The first op whose per-device values differ from the unpartitioned run."""
    op: str
    location: str | None
    result: int
    devices: tuple[int, ...]
    max_abs_error: float
    reason: str | None

    def json(self) -> dict:
        return {"op": self.op, "location": self.location, "result": self.result, "devices": list(self.devices),
                "max_abs_error": self.max_abs_error, "reason": self.reason}

    def text(self) -> str:
        where = f"{self.location}: " if self.location else ""
        why = f": {self.reason}" if self.reason else ""
        return (f"first difference: {where}'{self.op}' result #{self.result} on devices {list(self.devices)} "
                f"(max error {self.max_abs_error:.3g}){why}")


def first_difference(reference: Tracer, devices: Tracer, num_devices: int, meshes: dict[str, Mesh],
                     close, final: dict[int, list] | None = None) -> Difference | None:
    """The first op of the reference run (device 0 of `reference`) whose
    values the devices of `devices` do not hold; `close(got, want)` ->
    (ok, max abs error). Of the per-device ops carrying an op's tag, the
    last to run whose results have the op's local shapes (_held_as)
    stands for it: the collectives the partitioner put after an op (an
    all_reduce of its partial sums, a reshard to its result's sharding)
    carry its location, and what they leave is what the op's users read;
    the index arithmetic of a reshard (an offset looked up by partition id)
    carries it too, and is no value of the op. `final` (final_shardings)
    gives the shardings of ops that carry none in the per-device program."""
    by_tag: dict[int, list[Traced]] = {}
    for (d, tag, _), t in devices.records.items():
        if d == 0:
            by_tag.setdefault(tag, []).append(t)
    ref = sorted(((t.order, tag, t) for (d, tag, _), t in reference.records.items() if d == 0), key=lambda x: x[0])
    for _, tag, want in ref:
        picked = _stand_in(want, sorted(by_tag.get(tag, ()), key=lambda t: -t.order), tag, devices, num_devices,
                           meshes, (final or {}).get(tag))
        if picked is None:
            continue
        got, shardings = picked
        for i, value in enumerate(want.values):
            diff = _compare_result(value, [g.values[i] for g in got], shardings[i], meshes, close)
            if diff is not None:
                bad, err, reason = diff
                return Difference(want.name, got[0].location or want.location, i, tuple(bad), err, reason)
    return None


def _stand_in(want: Traced, candidates: list[Traced], tag: int, devices: Tracer, num_devices: int, meshes,
              final: list | None):
    """The records of the first of `candidates` (latest first) that every
    device ran and whose results have the local shapes of `want`'s under
    their shardings, with those shardings; None if there is none."""
    for t in candidates:
        if len(t.values) != len(want.values):
            continue
        got = [devices.records.get((d, tag, t.op)) for d in range(num_devices)]
        if any(g is None for g in got):
            continue
        shardings = list(t.shardings)
        if final is not None and len(final) == len(shardings):
            shardings = [s if s is not None else f for s, f in zip(shardings, final)]
        if all(_held_as(np.asarray(w), g.values[i], shardings[i], meshes)
               for g in got for i, w in enumerate(want.values)):
            return got, shardings
    return None


def _held_as(want: np.ndarray, value, sharding: TensorSharding | None, meshes) -> bool:
    """Whether a device's `value` has the shape a device holds of `want`
    under `sharding` (the whole when replicated; padded to the rounded-up
    block when a dimension is not divisible)."""
    shape = np.shape(value)
    mesh = _mesh(sharding, meshes, 0)
    if sharding is None or mesh is None or sharding.is_fully_replicated or not want.ndim:
        return shape == want.shape
    if len(sharding.dims) != want.ndim:
        return False
    return shape == local_shape(want.shape, sharding, mesh, allow_uneven=True)


def _mesh(sharding: TensorSharding | None, meshes: dict[str, Mesh], num_devices: int) -> Mesh | None:
    if sharding is None:
        return None
    return meshes.get(sharding.mesh) if isinstance(sharding.mesh, str) else sharding.mesh


def _block(want: np.ndarray, sharding: TensorSharding | None, mesh: Mesh | None, d: int) -> np.ndarray:
    """Device d's part of `want` (the whole of it when replicated); a
    non-divisible dimension's last blocks are short or empty."""
    if sharding is None or mesh is None or sharding.is_fully_replicated or not want.ndim:
        return want
    sizes = local_shape(want.shape, sharding, mesh, allow_uneven=True)
    index = tuple(slice(shard_index(d, mesh, dim.axes) * n, (shard_index(d, mesh, dim.axes) + 1) * n)
                  for n, dim in zip(sizes, sharding.dims))
    return want[index]


def _valid(got: np.ndarray, block: np.ndarray) -> np.ndarray | None:
    """The part of a device's (padded) value that holds data."""
    got = np.asarray(got)
    if got.ndim != block.ndim or any(g < b for g, b in zip(got.shape, block.shape)):
        return None
    return got[tuple(slice(0, n) for n in block.shape)]


_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def combined(values: list, axes, mesh: Mesh, kind: str = "sum") -> list:
    """Each device's value reduced with those of its group over `axes`."""
    out = list(values)
    for group in device_groups(list(axes), mesh):
        total = values[group[0]]
        with np.errstate(all="ignore"):   # (overflow: a value here, as in the runs)
            for d in group[1:]:
                total = _REDUCE[kind](total, values[d])
        for d in group:
            out[d] = total
    return out


def _matches(values, want, sharding, mesh, close) -> tuple[list[int], float]:
    bad, worst = [], 0.0
    for d, v in enumerate(values):
        block = _block(want, sharding, mesh, d)
        got = _valid(v, block)   # (not None: _compare_result checked the shapes)
        ok, err = close(got, block)
        worst = max(worst, err)
        if not ok:
            bad.append(d)
    return bad, worst


def _compare_result(want, values, sharding, meshes, close):
    """None if the devices hold `want` under `sharding`; else (devices,
    max error, reason or None)."""
    want = np.asarray(want)
    if not all(_held_as(want, v, sharding, meshes) for v in values):
        return None   # (no block of `want`: nothing to compare, and no error to tell)
    mesh = _mesh(sharding, meshes, len(values))
    if sharding is not None and sharding.unreduced and mesh is not None:
        values = combined(values, sharding.unreduced, mesh)
    bad, err = _matches(values, want, sharding, mesh, close)
    if not bad:
        return None
    return bad, err, _reason(want, values, sharding, mesh, close)


def _reason(want, values, sharding, mesh, close) -> str | None:
    if mesh is None or not mesh.axes:
        return None
    used = {a.name for d in (sharding.dims if sharding else ()) for a in d.axes}
    free = [a.name for a in mesh.axes if a.name not in used]
    from sdylog.model.axis import AxisRef
    for k in range(1, len(free) + 1):
        for axes in itertools.combinations(free, k):
            refs = [AxisRef(a) for a in axes]
            if not _matches(combined(values, refs, mesh), want, sharding, mesh, close)[0]:
                names = ", ".join(f'"{a}"' for a in axes)
                return f"each device holds a partial sum over {{{names}}} that is never reduced (an all_reduce is missing)"
    holders = {}
    for d, v in enumerate(values):
        for other in range(len(values)):
            block = _block(want, sharding, mesh, other)
            got = _valid(v, block)
            if got is not None and got.shape == block.shape and close(got, block)[0]:
                holders[d] = other
                break
    if len(holders) == len(values) and any(d != o for d, o in holders.items()):
        moved = ", ".join(f"device {d} has device {o}'s" for d, o in holders.items() if d != o)
        return f"shards read out of place ({moved})"
    return None
