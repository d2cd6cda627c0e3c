"""Simulated devices: one thread per device, each with its own buffers, and a
communicator through which collectives exchange data.

A collective deposits each device's operand under a key (its process group
and how many collectives that group has run on this device so far); the last
arrival wakes the others, and every device builds its own result from the
deposited operands. When every running device waits and no exchange can
complete (devices disagree on their collectives), the run fails instead of
hanging. Counts and bytes per collective kind are recorded.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import numpy as np

from sdylog.ir.diagnostics import SdylogError
from sdylog.simulate.program import Aborted, DeviceRuntime, ExecutionError, Program


@dataclass
class CollectiveStats:
    """Per collective kind: how many times a group ran it, and the operand bytes
    all participating devices contributed."""
    counts: dict = field(default_factory=dict)
    bytes: dict = field(default_factory=dict)

    def add(self, kind: str, count: int, nbytes: int) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + count
        self.bytes[kind] = self.bytes.get(kind, 0) + nbytes

    def merge(self, other: "CollectiveStats") -> None:
        for k in other.counts:
            self.add(k, other.counts[k], other.bytes.get(k, 0))

    def rows(self) -> list[tuple[str, int, int]]:
        return [(k, self.counts[k], self.bytes.get(k, 0)) for k in sorted(self.counts)]

    def table(self) -> str:
        rows = self.rows()
        if not rows:
            return "no collectives"
        w = max(len("collective"), *(len(r[0]) for r in rows))
        lines = [f"{'collective':<{w}}  {'count':>7}  {'bytes':>12}"]
        lines += [f"{k:<{w}}  {c:>7}  {b:>12}" for k, c, b in rows]
        return "\n".join(lines)


def nbytes_of(values) -> int:
    return int(sum(np.asarray(v).nbytes for v in values))


class Communicator:
    def __init__(self, num_devices: int):
        self.num_devices = num_devices
        self.stats = CollectiveStats()
        self._cond = threading.Condition()
        self._slots: dict = {}
        self._running = num_devices
        self._waiting: dict = {}   # device -> (key, group size) it waits on
        self.failure: BaseException | None = None

    def exchange(self, rt: DeviceRuntime, group: tuple[int, ...], kind: str, value, nbytes: int,
                 combine=None):
        """Deposit this device's `value` for the group's next collective; return
        {device: value} once every member has deposited. With `combine`, return
        combine([value of each member, in group order]) instead, computed once
        for the whole group (by its first member to get there) and shared by
        all: `combine` must give every device the same result (an all-reduce's
        sum, not this device's slice of it)."""
        entry = self._deposit(rt, group, kind, value, nbytes)
        values = entry["values"]
        if combine is None:
            return values
        with entry["once"]:
            if "combined" not in entry:   # (a member whose combine failed leaves it to the next)
                entry["combined"] = combine([values[d] for d in group])
        return entry["combined"]

    def _deposit(self, rt: DeviceRuntime, group, kind, value, nbytes) -> dict:
        """The group's entry for this collective once every member has deposited."""
        n = rt.next_count(("group", group))
        key = (group, n)
        with self._cond:
            self._check()
            entry = self._slots.get(key)
            if entry is None:
                entry = self._slots[key] = {"kind": kind, "values": {}, "read": 0, "once": threading.Lock()}
            elif entry["kind"] != kind:
                self._fail(SdylogError(
                    f"devices {list(group)} disagree on their collective #{n}: '{entry['kind']}' vs '{kind}'"))
            entry["values"][rt.device_id] = value
            if len(entry["values"]) == len(group):
                self.stats.add(kind, 1, 0)
                self._cond.notify_all()
            self.stats.add(kind, 0, nbytes)
            while len(entry["values"]) < len(group):
                self._waiting[rt.device_id] = (key, len(group))
                if self._stuck():
                    del self._waiting[rt.device_id]
                    self._fail(SdylogError(
                        f"deadlock: device {rt.device_id} waits in '{kind}' with group {list(group)}, "
                        "but the other devices never join it"))
                self._cond.wait()
                del self._waiting[rt.device_id]
                self._check()
            entry["read"] += 1
            if entry["read"] == len(group):
                del self._slots[key]
            return entry

    def finished(self, device: int | None = None) -> None:
        """`device` (when given) has run to its end."""
        with self._cond:
            self._running -= 1
            if self._running and self._stuck() and self.failure is None:
                self.failure = SdylogError("deadlock: devices wait for collectives that finished devices never join")
            self._cond.notify_all()

    def _stuck(self) -> bool:
        """Every running device waits, and none of the exchanges they wait on is complete."""
        if len(self._waiting) < self._running:
            return False
        for key, size in self._waiting.values():
            entry = self._slots.get(key)
            if entry is None or len(entry["values"]) >= size:
                return False
        return True

    def abort(self, exc: BaseException) -> None:
        with self._cond:
            if self.failure is None:
                self.failure = exc
            self._cond.notify_all()

    def _check(self) -> None:
        if self.failure is not None:
            raise Aborted()

    def _fail(self, exc: BaseException):
        if self.failure is None:
            self.failure = exc
        self._cond.notify_all()
        raise exc


def _blas_threads(n: int):
    """BLAS runs `n` threads meanwhile: each simulated device is a thread
    already, and BLAS's own threads on top of them (as many as cores, per
    device) fight over the cores (transformer_L2 on 8 devices, 2 cores: a
    step takes 20x longer)."""
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=n, user_api="blas")


@dataclass
class DeviceRun:
    """What runs on one device: a function of the program (by name, or a
    compiled callable `fn(args, rt)`) and its arguments."""
    function: object
    args: list


def run_on_devices(program: Program, runs: list[list[DeviceRun]], stats: CollectiveStats | None = None,
                   comm: Communicator | None = None, in_manual_body: bool = False) -> list[list]:
    """Run `runs[replica][partition]` at once, one thread per device; return
    each device's results in the same layout. `comm`: the communicator to
    use (e.g. one with point-to-point channels, sdylog/simulate/p2p.py).
    `in_manual_body`: the runs are a manual computation's body in an
    unpartitioned program (DeviceRuntime.in_manual_body)."""
    nr = len(runs)
    npart = len(runs[0]) if runs else 0
    for row in runs:
        if len(row) != npart:
            raise SdylogError("every replica must run the same number of partitions")
        for r in row:
            if isinstance(r.function, str):
                program.function(r.function)  # compile errors surface here, not in a thread
    comm = comm if comm is not None else Communicator(nr * npart)
    results: list[list] = [[None] * npart for _ in range(nr)]
    errors: list = []

    def work(r: int, p: int) -> None:
        rt = DeviceRuntime(replica_id=r, partition_id=p, num_replicas=nr, num_partitions=npart, comm=comm,
                           in_manual_body=in_manual_body)
        try:
            run = runs[r][p]
            fn = program.function(run.function) if isinstance(run.function, str) else run.function
            results[r][p] = fn(list(run.args), rt)
        except Aborted:
            pass
        except BaseException as e:  # noqa: BLE001 - reported after the join
            errors.append(e)
            comm.abort(e)
        finally:
            comm.finished(r * npart + p)

    if nr * npart == 1:
        work(0, 0)
    else:
        threads = [threading.Thread(target=work, args=(r, p), daemon=True)
                   for r in range(nr) for p in range(npart)]
        with _blas_threads(max(1, (os.cpu_count() or 1) // (nr * npart))):
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    if stats is not None:
        stats.merge(comm.stats)
    if errors:
        raise errors[0]
    if comm.failure is not None:
        f = comm.failure
        raise f if isinstance(f, SdylogError) else ExecutionError(str(f))
    return results
