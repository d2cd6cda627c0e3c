"""The propagation rules run on a small module, and what they derive read by
the names a test writes: values as MLIR prints them (`%0`, `%arg0`), main's
result slots as `result0`, units as `a` (a whole axis) or `a:(2)3` (a
sub-axis), ops by name. For the tests of one rules concern each
(test_rules_*.py): assertions on relations, so that a rule change shows its
effect in seconds."""
from __future__ import annotations

from dataclasses import dataclass

from sdylog.ir import parse_module
from sdylog.propagation.driver import PropagationOptions, propagate

# The options of the propagation passes (sdylog/passes/*_propagate.py).
BASIC = PropagationOptions(strategies=("basic",))
AGGRESSIVE = PropagationOptions(strategies=("aggressive",))
USER_PRIORITY = PropagationOptions(strategies=("aggressive",), op_priorities=True, user_priorities=True)


@dataclass(frozen=True)
class UnitRank:
    """A unit a tensor holds, and when it got it (rules/propagation/phases.dl)."""
    dim: int
    pos: int
    unit: str
    phase: int
    position: int      # sweep position of the visit that wrote it
    cascade: int       # its order among that visit's writes (phases.dl: cascade order * CASCADE_STEP
                       # + user order * USER_STEP + factor order)
    seen: int          # the cascade at which the visits it triggers see it
    by: str            # the op that wrote it, or "init"


class Derived:
    """propagate(text) with every relation derived."""

    def __init__(self, text: str, options: PropagationOptions = AGGRESSIVE):
        self.module = parse_module(text)
        with self.module.context:
            result = propagate(self.module, options)
            self.engine, self.facts = result.engine, result.facts
            self._value_ids = {v.get_name(): i for i, v in enumerate(self.facts.values)}
        axis_sizes = {(m, a): z for m, a, _, z in self.rows("mesh_axis")}
        self._units = {u: a if pre == 1 and z == axis_sizes[m, a] else f"{a}:({pre}){z}"
                       for u, m, a, pre, z in self.rows("axis_unit")}
        ((self.cascade_step, self.user_step),) = self.rows("cascade_span")

    def rows(self, relation: str) -> list[tuple]:
        return list(self.engine.read(relation))

    # ------------------------------------------------------------ names
    def tensor(self, name: str) -> int:
        if name.startswith("result"):
            (t,) = [t for _, i, t in self.rows("func_result_tensor") if i == int(name[len("result"):])]
            return t
        (t,) = [t for v, t in self.rows("tensor_of") if v == self._value_ids[name]]
        return t

    def unit_name(self, u: int) -> str:
        return self._units[u]

    def ops(self, name: str) -> list[int]:
        """The ids of the ops called `name` (e.g. stablehlo.add), in program order."""
        return [o for o, op in enumerate(self.facts.ops) if op is not None and op.name == name]

    def op(self, name: str) -> int:
        """The id of the only op called `name`."""
        (o,) = self.ops(name)
        return o

    def position(self, o: int) -> int:
        """The sweep position of the visit of op o."""
        (pos,) = [pos for o2, _, pos, _ in self.rows("visit") if o2 == o]
        return pos

    def op_name(self, o: int) -> str:
        return self.facts.ops[o].name if o >= 0 else f"result{-1 - o}"

    # ------------------------------------------------------------ what tensors hold
    def sharding(self, name: str) -> list[list[str]]:
        """The units tensor `name` ends with, per dimension."""
        t = self.tensor(name)
        rank = len([d for t2, d, _ in self.rows("tensor_dim") if t2 == t])
        dims: list[list[str]] = [[] for _ in range(rank)]
        for t2, d, p, u in sorted(self.rows("final_unit")):
            if t2 == t:
                dims[d].append(self.unit_name(u))
        return dims

    def unit_ranks(self, name: str) -> list[UnitRank]:
        """The units tensor `name` holds (core.dl: HOLDS, the init_unit and
        unit_at rows): each unit and when it came."""
        t = self.tensor(name)
        out = [UnitRank(d, p, self.unit_name(u), ph, 0, 0, 0, "init")
               for t2, d, p, u, _, _, ph in self.rows("init_unit") if t2 == t]
        for t2, d, p, u, _, _, ph, pos, c, seen, by, _ in self.rows("unit_at"):
            if t2 == t:
                out.append(UnitRank(d, p, self.unit_name(u), ph, pos, c, seen, self.op_name(by)))
        return sorted(out, key=lambda x: (x.dim, x.pos))

    def proposals(self, op: str, relation: str = "prop") -> set[tuple[int, int, str]]:
        """(factor, position, unit) of `prop` (the compatible axes) or of the
        proposals left in `op_unit` (widen = 1) at the visit of `op`."""
        o = self.op(op)
        if relation == "prop":
            return {(f, p, self.unit_name(u)) for o2, f, p, u, *_ in self.rows("prop") if o2 == o and p >= 0}
        return {(f, p, self.unit_name(u)) for o2, f, p, u, _, _, _, _, _, w, _ in self.rows("op_unit")
                if o2 == o and w == "proposed"}

    def cuts(self, op: str) -> set[tuple[int, int, tuple[int, int, int]]]:
        """(factor, position, rank) of the conflicts that cut the compatible
        axes at the visit of `op` (prop's rows at CUT_AT(position), core.dl):
        from that rank on nothing is proposed at that position or after."""
        o = self.op(op)
        return {(f, -2 - p, (ph, pos, c)) for o2, f, p, _, _, _, _, ph, pos, c, _ in self.rows("prop")
                if o2 == o and p < 0}
