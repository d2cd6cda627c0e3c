"""Dimension and tensor shardings (`#sdy.sharding<...>`) and per-value lists."""
from __future__ import annotations

from dataclasses import dataclass, replace

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh


@dataclass(frozen=True)
class DimSharding:
    """One dimension: its axes major to minor, closed (`{...}`) or open (`{..., ?}`),
    and an optional user priority (`p0` is the highest)."""
    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None

    @staticmethod
    def from_attr(attr: ir.Attribute) -> DimSharding:
        d = sdy.DimensionShardingAttr(attr)
        return DimSharding(tuple(AxisRef.from_attr(a) for a in d.axes), d.is_closed, d.priority)

    def to_attr(self) -> ir.Attribute:
        return sdy.DimensionShardingAttr.get([a.to_attr() for a in self.axes], self.is_closed, self.priority)

    def __str__(self) -> str:
        body = ", ".join(map(str, self.axes))
        if not self.is_closed:
            body = f"{body}, ?" if body else "?"
        return "{" + body + "}" + (f"p{self.priority}" if self.priority is not None else "")


# Tensor shardings converted from and to attributes, kept: the passes of a
# pipeline convert the same few shardings many times, and every run of a
# process the same ones again (MLIR attributes are uniqued per context, and
# a key keeps its context alive, so that no other attribute takes its
# place). Emptied when they hold _CONVERTED of them.
_CONVERTED = 4096
_FROM_ATTR: dict = {}       # attribute -> TensorSharding
_TO_ATTR: dict = {}         # (TensorSharding, context) -> attribute


def _kept(kept: dict, key, value):
    if len(kept) >= _CONVERTED:
        kept.clear()
    kept[key] = value
    return value


@dataclass(frozen=True)
class TensorSharding:
    """A tensor's sharding on a mesh: `mesh` is a symbol name or an inlined Mesh."""
    mesh: str | Mesh
    dims: tuple[DimSharding, ...] = ()
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()

    @staticmethod
    def from_attr(attr: ir.Attribute) -> TensorSharding:
        """As read_attr, kept per attribute (see _CONVERTED)."""
        got = _FROM_ATTR.get(attr)
        if got is None:
            got = _kept(_FROM_ATTR, attr, TensorSharding.read_attr(attr))
        return got

    @staticmethod
    def read_attr(attr: ir.Attribute) -> TensorSharding:
        s = sdy.TensorShardingAttr(attr)
        m = s.mesh_or_ref
        mesh = m.value if isinstance(m, ir.FlatSymbolRefAttr) else Mesh.from_attr(m)
        return TensorSharding(
            mesh,
            tuple(DimSharding.from_attr(d) for d in s.dimension_shardings),
            tuple(AxisRef.from_attr(a) for a in s.replicated_axes),
            tuple(AxisRef.from_attr(a) for a in s.unreduced_axes),
        )

    def to_attr(self) -> ir.Attribute:
        """As make_attr, kept per sharding and context (see _CONVERTED)."""
        key = (self, ir.Context.current)
        got = _TO_ATTR.get(key)
        if got is None:
            got = _kept(_TO_ATTR, key, self.make_attr())
        return got

    def make_attr(self) -> ir.Attribute:
        """The attribute in the current context."""
        mesh = self.mesh if isinstance(self.mesh, str) else self.mesh.to_attr()
        return sdy.TensorShardingAttr.get(
            mesh, [d.to_attr() for d in self.dims],
            [a.to_attr() for a in self.replicated], [a.to_attr() for a in self.unreduced])

    def __str__(self) -> str:
        """As sdy prints it: `<@mesh, [{"x"}, {}], replicated={"y"}>`."""
        mesh = f"@{self.mesh}" if isinstance(self.mesh, str) else str(self.mesh)
        parts = [mesh, "[" + ", ".join(map(str, self.dims)) + "]"]
        for word, axes in (("replicated", self.replicated), ("unreduced", self.unreduced)):
            if axes:
                parts.append(f"{word}={{{', '.join(map(str, axes))}}}")
        return "<" + ", ".join(parts) + ">"

    @staticmethod
    def replicated_on(mesh: str | Mesh, rank: int, closed: bool = True) -> TensorSharding:
        return TensorSharding(mesh, tuple(DimSharding((), closed) for _ in range(rank)))

    def with_dim(self, i: int, dim: DimSharding) -> TensorSharding:
        dims = list(self.dims)
        dims[i] = dim
        return replace(self, dims=tuple(dims))

    def used_axes(self) -> list[AxisRef]:
        """Every axis the sharding names: dimensions, replicated, unreduced."""
        return [a for d in self.dims for a in d.axes] + list(self.replicated) + list(self.unreduced)

    @property
    def is_fully_replicated(self) -> bool:
        return all(not d.axes for d in self.dims)


def sharding_per_value(attr: ir.Attribute) -> list[TensorSharding]:
    return [TensorSharding.from_attr(s) for s in sdy.TensorShardingPerValueAttr(attr).shardings]


def sharding_per_value_attr(shardings: list[TensorSharding]) -> ir.Attribute:
    return sdy.TensorShardingPerValueAttr.get([s.to_attr() for s in shardings])
