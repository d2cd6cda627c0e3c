"""The decisions of one MPMD run, as the emitter and the simulator read them
(all read back from the relations of rules/mpmd.dl: nothing here decides)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Channel:
    """One channel: a send on `src` and a recv on `dst` with handle `id`."""
    id: int
    value: int            # the value id it carries (a token for "control"; the loop for "predicate")
    src: int
    dst: int
    kind: str             # "data", "control" (a token: an empty payload), "predicate" (a loop's)
    elem_type: str        # the value's element type ("i1" for a predicate)
    wire_type: str        # what travels ("bf16" for a cast f32)
    shape: tuple[int, ...]
    bytes: int            # of one message
    after: int            # the op after which it fires (the entry function's op: its start; a predicate: its loop)
    hop: int = 0          # its place in a chain of forwards
    riders: tuple[int, ...] = ()   # tokens whose recv token this data transfer's recv stands for
    recv_at: tuple[str, int] | None = None   # ("before" | "after", op): where its recv fires, if not at `after`
    members: tuple[int, ...] = ()   # merged small transfers: the values, concatenated flat in this order

    def manifest(self, names: dict) -> dict:
        return {"id": self.id, "src": self.src, "dst": self.dst,
                "kind": self.kind if self.kind != "predicate" else "control",
                "role": self.kind, "dtype": self.wire_type, "shape": list(self.shape), "bytes": self.bytes,
                "value": names.get(self.value, f"#{self.value}")}


@dataclass(frozen=True)
class Region:
    """A while, case or if whose devices each run their own copy."""
    op: int
    participants: tuple[int, ...]
    leader: int | None                      # the device of a while's condition
    carriers: dict                          # slot -> devices carrying it
    predicate: dict = field(default_factory=dict)   # device -> its predicate channel (spanning while)

    @property
    def spanning(self) -> bool:
        return len(self.participants) > 1

    def carried(self, d: int) -> list[int]:
        return sorted(k for k, devs in self.carriers.items() if d in devs)


@dataclass
class Plan:
    entry: str
    devices: tuple[int, ...]
    facts: object                           # the FactSet: ids back to IR ops and values
    placed: dict                            # op id -> devices it runs on
    rep: dict                               # value id -> the value it stands for (where not itself)
    regions: dict                           # op id -> Region
    channels: list                          # [Channel], by id
    events: dict                            # ("after" | "before", op id) -> [(Channel, "send" | "recv")]
    #                                         (after the entry function's op: at its start)
    moves: dict                             # (value id, device) -> [memory kinds it is moved to]
    reads_kind: dict                        # (op id, value id) -> memory kind the op reads it in
    arg_fed: list                           # argument index -> devices fed
    result_loc: list                        # result index -> device
    arg_memory: dict                        # argument index -> memory kind
    result_memory: dict                     # result index -> memory kind
    bf16: str                               # "off", "nearest", "truncate"
    stats: dict = field(default_factory=dict)
    engine: object = None                   # the Datalog engine with every relation (query, explain)

    def of(self, v: int) -> int:
        return self.rep.get(v, v)
