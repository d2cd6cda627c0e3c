"""Point-to-point channels between simulated devices (stablehlo.send / recv).

A channel is a FIFO of messages keyed by its handle: the n-th send on a
handle meets the n-th recv. Two semantics:

- buffered (TensorFlow's rendezvous): a send deposits its message and goes on;
  a recv waits for a message;
- rendezvous (the StableHLO reference interpreter's): a send also waits until
  its recv has been posted.

When every running device waits and no wait can end, the run stops with a
report naming each blocked device, the op it waits in and its location, the
channel and the device it waits for, the cycle of devices waiting on each
other, and waits on devices that already finished: never a hang. Sends to
and recvs from the host (channel types 2 and 3, JAX callbacks) talk to a
host endpoint that keeps what it is sent and answers recvs with zeros.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

import numpy as np

from sdylog.ir.diagnostics import SdylogError
from sdylog.simulate.mesh import Communicator, nbytes_of

MODES = ("buffered", "rendezvous")


@dataclass(frozen=True)
class Site:
    """Where a device waits: the op, its location, its channel and peer."""
    op: str
    location: str
    handle: int
    peer: int | None        # the device on the other end (source_target_pairs), if known


@dataclass
class ChannelStats:
    src: int | None = None
    dst: int | None = None
    messages: int = 0
    bytes: int = 0


class DeadlockError(SdylogError):
    """Every running device waits on another: the report says who waits where."""

    def __init__(self, message: str, blocked: dict):
        super().__init__(message)
        self.blocked = blocked     # device -> (role, Site)


@dataclass
class _Wait:
    role: str        # "send" or "recv"
    site: Site
    index: int       # which message of the channel it waits for


class P2PCommunicator(Communicator):
    """The mesh's communicator with point-to-point channels (collectives work as before)."""

    def __init__(self, num_devices: int, mode: str = "buffered"):
        if mode not in MODES:
            raise SdylogError(f"unknown channel mode '{mode}' (choose from {', '.join(MODES)})")
        super().__init__(num_devices)
        self.mode = mode
        self.queues: dict = defaultdict(deque)   # handle -> messages not yet received
        self.sends = defaultdict(int)            # handle -> sends started
        self.recvs = defaultdict(int)            # handle -> recvs posted
        self.p2p_waits: dict = {}                # device -> _Wait
        self.finished_devices: set = set()
        self.channels: dict = defaultdict(ChannelStats)
        self.host_log: list = []                 # (device, handle, values) sent to the host
        self.trace: list = []                    # (device, event, detail) in the order they happened

    # ---------------------------------------------------------------- channels
    def send(self, rt, site: Site, values: list) -> None:
        with self._cond:
            self._check()
            index = self.sends[site.handle]
            self.sends[site.handle] += 1
            if self.mode == "rendezvous":
                self._wait_until(rt, _Wait("send", site, index), lambda: self.recvs[site.handle] > index)
            self.queues[site.handle].append(values)
            stats = self.channels[site.handle]
            stats.src, stats.dst = rt.device_id, site.peer
            stats.messages += 1
            stats.bytes += nbytes_of(values)
            self.trace.append((rt.device_id, "send", site.handle))
            self._cond.notify_all()

    def recv(self, rt, site: Site) -> list:
        with self._cond:
            self._check()
            index = self.recvs[site.handle]
            self.recvs[site.handle] += 1
            self._cond.notify_all()   # a rendezvous send may wait for this post
            self._wait_until(rt, _Wait("recv", site, index), lambda: len(self.queues[site.handle]) > 0)
            self.trace.append((rt.device_id, "recv", site.handle))
            return self.queues[site.handle].popleft()

    def host_send(self, rt, handle: int, values: list) -> None:
        with self._cond:
            self.host_log.append((rt.device_id, handle, values))

    def record(self, rt, event: str, detail) -> None:
        """An event of the run's trace (side effects, in the order they ran)."""
        with self._cond:
            self.trace.append((rt.device_id, event, detail))

    def _wait_until(self, rt, wait: _Wait, ready) -> None:
        while not ready():
            self.p2p_waits[rt.device_id] = wait
            if self._stuck():
                del self.p2p_waits[rt.device_id]
                blocked = {**{d: (w.role, w.site) for d, w in self.p2p_waits.items()},
                           rt.device_id: (wait.role, wait.site)}
                self._fail(self._deadlock(blocked))
            self._cond.wait()
            self.p2p_waits.pop(rt.device_id, None)
            self._check()

    def _ready(self, w: _Wait) -> bool:
        if w.role == "recv":
            return len(self.queues[w.site.handle]) > 0
        return self.recvs[w.site.handle] > w.index

    def _stuck(self) -> bool:
        """Every running device waits (in a collective or on a channel) and no wait can end."""
        if len(self._waiting) + len(self.p2p_waits) < self._running:
            return False
        for key, size in self._waiting.values():
            entry = self._slots.get(key)
            if entry is None or len(entry["values"]) >= size:
                return False
        return not any(self._ready(w) for w in self.p2p_waits.values())

    def finished(self, device: int | None = None) -> None:
        with self._cond:
            if device is not None:
                self.finished_devices.add(device)
            self._running -= 1
            if self._running and self._stuck() and self.failure is None:
                blocked = {d: (w.role, w.site) for d, w in self.p2p_waits.items()}
                self.failure = self._deadlock(blocked) if blocked else SdylogError(
                    "deadlock: devices wait for collectives that finished devices never join")
            self._cond.notify_all()

    def unconsumed(self) -> list[str]:
        """Messages sent and never received (an error at the end of a run)."""
        return [f"channel {h}: {len(q)} message{'s' if len(q) != 1 else ''} sent by device "
                f"{self.channels[h].src} never received" for h, q in sorted(self.queues.items()) if q]

    # ---------------------------------------------------------------- the report
    def _deadlock(self, blocked: dict) -> DeadlockError:
        lines = [f"deadlock ({self.mode} channels): devices {', '.join(map(str, sorted(blocked)))} wait "
                 "and none can go on"]
        for d in sorted(blocked):
            role, site = blocked[d]
            verb = "receives from" if role == "recv" else "sends to"
            peer = "?" if site.peer is None else f"device {site.peer}"
            where = f" at {site.location}" if site.location else ""
            lines.append(f"  device {d}: {site.op}{where} on channel {site.handle} {verb} {peer}")
            if site.peer in self.finished_devices:
                what = "sending it" if role == "recv" else "receiving it"
                lines.append(f"    device {site.peer} finished without {what}")
        cycle = _cycle({d: site.peer for d, (_, site) in blocked.items()})
        if cycle:
            lines.append("  wait-for cycle: " + " -> ".join(f"d{d}" for d in cycle))
        return DeadlockError("\n".join(lines), blocked)


def _cycle(waits_for: dict) -> list[int]:
    """A cycle of devices each waiting for the next, if any (first device repeated at the end)."""
    for start in sorted(waits_for):
        path, d = [], start
        while d is not None and d not in path:
            path.append(d)
            d = waits_for.get(d)
        if d is not None:
            loop = path[path.index(d):]
            return loop + [loop[0]]
    return []


def zeros_like_type(t) -> np.ndarray:
    from sdylog.simulate.dtypes import tensor_dtype, tensor_shape
    return np.zeros(tensor_shape(t), tensor_dtype(t))
