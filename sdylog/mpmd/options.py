"""What one MPMD partitioning run does (each option becomes an mpmd_option
fact the rules read)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from sdylog.ir.diagnostics import UsageError

BF16_MODES = ("off", "nearest", "truncate")
FANOUTS = ("star", "chain")
CONTROL_FLOW = ("replicate", "atomic")
RECV_POLICIES = ("eager", "lazy", "window")


@dataclass(frozen=True)
class MpmdOptions:
    assign: tuple[tuple[str, int], ...] = ()   # (named computation or function, device)
    bf16_transfers: str = "off"     # f32 travels as bf16: "nearest" (stablehlo.convert) or "truncate" (TF)
    fanout: str = "star"            # several destinations: each from the origin, or a chain
    infer_transfers: bool = True    # off: a free op whose operands would travel is an error
    merge_control: bool = True      # a token rides with a data transfer of the same op
    control_flow: str = "replicate"  # loops/conditionals may span devices, or stay whole on one
    max_clones: int = 1             # a free op used on up to this many devices is computed on each
    devices: int | None = None      # the module's device count (else mhlo.num_partitions)
    entry: str | None = None        # the function to partition (else @main or the only public one)
    recv_policy: str = "eager"      # recvs at their send's key, before their first reader, or a window before
    recv_window: int = 0            # "window": how many op positions before the first reader
    merge_small: bool = False       # values of at most merge_elements elements travel together
    merge_elements: int = 1         # (Shardy's merge_transfers threshold)
    reduce_locally: bool = False    # sums of unplaced adds: each device adds its own leaves first

    def __post_init__(self):
        for name, value, allowed in (("--bf16-transfers", self.bf16_transfers, BF16_MODES),
                                     ("--fanout", self.fanout, FANOUTS),
                                     ("--control-flow", self.control_flow, CONTROL_FLOW),
                                     ("--recv-policy", self.recv_policy, RECV_POLICIES)):
            if value not in allowed:
                raise UsageError(f"{name}: '{value}' is not one of {', '.join(allowed)}")
        if self.max_clones < 1:
            raise UsageError("--max-clones must be at least 1")
        if self.devices is not None and self.devices < 1:
            raise UsageError("--devices must be at least 1")

    def check_channel_mode(self, mode: str) -> None:
        """A usage error when these options cannot run on `mode`'s channels
        (sdylog simulate --channel-mode): lazy and windowed recvs are ordered
        for buffered channels only."""
        if mode == "rendezvous" and self.recv_policy != "eager":
            policy = self.recv_policy + (f":{self.recv_window}" if self.recv_policy == "window" else "")
            raise UsageError(f"--recv-policy {policy} and --channel-mode rendezvous do not go together: such a recv "
                             "comes later than its send's point, and a rendezvous send waits for its recv, so "
                             "devices can deadlock (--recv-policy eager is ordered for rendezvous channels; "
                             "--channel-mode buffered runs any policy)")

    def facts(self) -> dict[str, list[tuple]]:
        onoff = {True: "on", False: "off"}
        return {
            "mpmd_option": [("fanout", self.fanout), ("bf16_transfers", self.bf16_transfers),
                            ("infer_transfers", onoff[self.infer_transfers]),
                            ("merge_control", onoff[self.merge_control]),
                            ("control_flow", self.control_flow), ("recv_policy", self.recv_policy),
                            ("merge_small", onoff[self.merge_small]),
                            ("reduce_locally", onoff[self.reduce_locally])],
            "mpmd_limit": [("max_clones", self.max_clones), ("recv_window", self.recv_window),
                           ("merge_elements", self.merge_elements)],
            "name_assignment": list(self.assign),
            "devices_option": [] if self.devices is None else [(self.devices,)],
        }


_ASSIGN = re.compile(r"^(?P<name>[^@\s]+)@(?P<dev>\d+)$")


def parse_assign(items) -> tuple[tuple[str, int], ...]:
    """`NAME@DEV` items (each may hold several, comma separated) as (name, device)."""
    out = []
    for item in items:
        for part in item.split(","):
            m = _ASSIGN.match(part.strip())
            if not m:
                raise UsageError(f"--assign: cannot read '{part}': write NAME@DEVICE, e.g. stage0@0")
            out.append((m["name"], int(m["dev"])))
    names = [n for n, _ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"--assign names {dup[0]} more than once")
    return tuple(out)


def parse_recv_policy(text: str) -> tuple[str, int]:
    """`eager`, `lazy` or `window:K`."""
    name, _, k = text.partition(":")
    if name not in RECV_POLICIES or (name == "window") != bool(k) or (k and not k.isdigit()):
        raise UsageError(f"--recv-policy: '{text}' is not eager, lazy or window:K")
    return name, int(k or 0)
