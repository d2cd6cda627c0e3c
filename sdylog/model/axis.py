"""Axis references and sub-axis arithmetic.

An axis `"x"` of size N splits into sub-axes `"x":(pre)size`, where `pre` is
the product of the sizes of the more-major sub-axes before it. A sub-axis
covers the multiplicative interval [pre, pre*size) of its axis: `"x":(1)2` and
`"x":(2)2` together are `"x"` when N == 4. A full axis is the interval [1, N).
Every operation here takes the full size of the axis (from the mesh) where it
needs one.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy


@dataclass(frozen=True, order=True)
class SubAxis:
    pre_size: int
    size: int

    @property
    def next_pre_size(self) -> int:
        return self.pre_size * self.size


@dataclass(frozen=True, order=True)
class AxisRef:
    name: str
    sub: SubAxis | None = None

    # --- MLIR -----------------------------------------------------------------
    @staticmethod
    def from_attr(attr: ir.Attribute) -> AxisRef:
        a = sdy.AxisRefAttr(attr)
        info = a.sub_axis_info
        if info is None:
            return AxisRef(a.name)
        s = sdy.SubAxisInfoAttr(info)
        return AxisRef(a.name, SubAxis(s.pre_size, s.size))

    def to_attr(self) -> ir.Attribute:
        info = sdy.SubAxisInfoAttr.get(self.sub.pre_size, self.sub.size) if self.sub else None
        return sdy.AxisRefAttr.get(self.name, info)

    def __str__(self) -> str:
        if self.sub is None:
            return f'"{self.name}"'
        return f'"{self.name}":({self.sub.pre_size}){self.sub.size}'

    # --- intervals ---------------------------------------------------------------
    def interval(self, axis_size: int) -> tuple[int, int]:
        """[pre, next_pre) of this ref within an axis of `axis_size`."""
        if self.sub is None:
            return 1, axis_size
        return self.sub.pre_size, self.sub.next_pre_size

    def size(self, axis_size: int) -> int:
        lo, hi = self.interval(axis_size)
        return hi // lo

    @staticmethod
    def of_interval(name: str, lo: int, hi: int, axis_size: int) -> AxisRef:
        """The ref covering [lo, hi): the full axis when that is all of it."""
        if lo == 1 and hi == axis_size:
            return AxisRef(name)
        return AxisRef(name, SubAxis(lo, hi // lo))

    # --- relations ---------------------------------------------------------------
    def contains(self, other: AxisRef, axis_size: int) -> bool:
        if self.name != other.name:
            return False
        lo, hi = self.interval(axis_size)
        olo, ohi = other.interval(axis_size)
        return lo <= olo and ohi <= hi

    def is_prefix_of(self, other: AxisRef, axis_size: int) -> bool:
        """Same start, and `other` contains this ref."""
        return other.contains(self, axis_size) and self.interval(axis_size)[0] == other.interval(axis_size)[0]

    def is_strict_prefix_of(self, other: AxisRef, axis_size: int) -> bool:
        return self.is_prefix_of(other, axis_size) and self != other

    def overlaps(self, other: AxisRef, axis_size: int) -> bool:
        if self.name != other.name:
            return False
        lo, hi = self.interval(axis_size)
        olo, ohi = other.interval(axis_size)
        return lo < ohi and olo < hi

    def can_merge(self, other: AxisRef, axis_size: int) -> bool:
        """`other` starts exactly where this ref ends (this is the more major part)."""
        return self.name == other.name and self.interval(axis_size)[1] == other.interval(axis_size)[0]

    def merge(self, other: AxisRef, axis_size: int) -> AxisRef:
        if not self.can_merge(other, axis_size):
            raise ValueError(f"cannot merge {self} and {other}")
        return AxisRef.of_interval(self.name, self.interval(axis_size)[0], other.interval(axis_size)[1], axis_size)

    def can_coexist(self, other: AxisRef, axis_size: int) -> bool:
        """Two refs can appear in one sharding: disjoint, or one inside the other
        with compatible boundaries (each boundary divides the next)."""
        if self.name != other.name:
            return True
        lo, hi = self.interval(axis_size)
        olo, ohi = other.interval(axis_size)
        (a_lo, a_hi), (b_lo, b_hi) = sorted([(lo, hi), (olo, ohi)])
        # Boundaries of both must be nested multiplicatively: each divides the next.
        points = sorted({a_lo, a_hi, b_lo, b_hi})
        return all(q % p == 0 for p, q in zip(points, points[1:]))

    def split(self, prefix_size: int, axis_size: int) -> tuple[AxisRef, AxisRef | None]:
        """Cut into a major part of `prefix_size` and the rest (None if nothing is left)."""
        lo, hi = self.interval(axis_size)
        if prefix_size <= 0 or (hi // lo) % prefix_size != 0:
            raise ValueError(f"{self} cannot be split at size {prefix_size}")
        mid = lo * prefix_size
        head = AxisRef.of_interval(self.name, lo, mid, axis_size)
        tail = AxisRef.of_interval(self.name, mid, hi, axis_size) if mid < hi else None
        return head, tail

    @property
    def pre_size(self) -> int:
        return self.sub.pre_size if self.sub else 1

    def prefix_without_overlap(self, other: AxisRef, axis_size: int) -> AxisRef | None:
        """The largest prefix of this ref that does not overlap `other` (None if
        empty, or if the two cannot coexist: Shardy's getPrefixWithoutOverlap)."""
        if not self.can_coexist(other, axis_size):
            return None
        if not self.overlaps(other, axis_size):
            return self
        lo, hi = self.interval(axis_size)
        olo, _ = other.interval(axis_size)
        if olo <= lo:
            return None
        return AxisRef.of_interval(self.name, lo, olo, axis_size)

    def suffix_without_overlap(self, other: AxisRef, axis_size: int) -> AxisRef | None:
        """The largest suffix of this ref that does not overlap `other` (None if
        empty, or if the two cannot coexist: Shardy's getSuffixWithoutOverlap)."""
        if not self.can_coexist(other, axis_size):
            return None
        if not self.overlaps(other, axis_size):
            return self
        _, hi = self.interval(axis_size)
        _, ohi = other.interval(axis_size)
        if hi <= ohi:
            return None
        return AxisRef.of_interval(self.name, ohi, hi, axis_size)

    def overlap(self, other: AxisRef, axis_size: int) -> AxisRef | None:
        """The part both refs cover (None if none, or if they cannot coexist:
        Shardy's getOverlap)."""
        if self.name != other.name:
            return None
        if self.sub is None:
            return other
        if other.sub is None:
            return self
        if not self.overlaps(other, axis_size) or not self.can_coexist(other, axis_size):
            return None
        lo, hi = self.interval(axis_size)
        olo, ohi = other.interval(axis_size)
        return AxisRef.of_interval(self.name, max(lo, olo), min(hi, ohi), axis_size)

    def greatest_common_prefix(self, other: AxisRef, axis_size: int) -> AxisRef | None:
        """The longest ref that is a prefix of both (None if they start apart)."""
        if self.name != other.name:
            return None
        lo, hi = self.interval(axis_size)
        olo, ohi = other.interval(axis_size)
        if lo != olo:
            return None
        return AxisRef.of_interval(self.name, lo, min(hi, ohi), axis_size)


# --- Shardy's orders ---------------------------------------------------------------
def axis_less(a: AxisRef, b: AxisRef) -> bool:
    """Shardy's AxisRefAttr::operator<: by name (as strings, not mesh order);
    within an axis the full axis sorts with the sub-axis at pre-size 1, then
    sub-axes by (pre-size, size)."""
    if a.name != b.name:
        return a.name < b.name
    if a.sub is None:
        return b.pre_size > 1
    if b.sub is None:
        return a.pre_size == 1
    return (a.sub.pre_size, a.sub.size) < (b.sub.pre_size, b.sub.size)


def _compare(a: AxisRef, b: AxisRef) -> int:
    return -1 if axis_less(a, b) else (1 if axis_less(b, a) else 0)


# Sort key for Shardy's AxisRefAttr order (`sorted(axes, key=AXIS_ORDER)`).
AXIS_ORDER = functools.cmp_to_key(_compare)


def mesh_axis_key(axis_names):
    """Sort key of Shardy's mesh comparator: the order of `axis_names` (the
    mesh's axes), then axis_less within an axis."""
    order = {name: i for i, name in enumerate(axis_names)}

    def cmp(a, b):
        if a.name != b.name:
            return -1 if order[a.name] < order[b.name] else 1
        return _compare(a, b)
    return functools.cmp_to_key(cmp)


def sort_and_merge(axes, axis_sizes: dict[str, int]) -> list[AxisRef]:
    """Shardy's sortAndMergeAxes: sorted in mesh order (the order of the
    `axis_sizes` dict), adjacent sub-axes merged."""
    out: list[AxisRef] = []
    for a in sorted(axes, key=mesh_axis_key(axis_sizes)):
        size = axis_sizes[a.name]
        if out and out[-1].can_merge(a, size):
            out[-1] = out[-1].merge(a, size)
        else:
            out.append(a)
    return out


def first_overlapping(axis: AxisRef, ordered: list[AxisRef], axis_sizes: dict[str, int]) -> int | None:
    """Index of the first ref of `ordered` (sorted by AXIS_ORDER, no two
    overlapping) that overlaps `axis`, or None: Shardy's getFirstOverlapping,
    which looks only beside where `axis` would be inserted."""
    lo, hi = 0, len(ordered)
    while lo < hi:   # lower_bound
        mid = (lo + hi) // 2
        if axis_less(ordered[mid], axis):
            lo = mid + 1
        else:
            hi = mid
    size = axis_sizes[axis.name]
    if lo > 0 and axis.overlaps(ordered[lo - 1], size):
        return lo - 1
    if lo < len(ordered) and axis.overlaps(ordered[lo], size):
        return lo
    return None


def add_or_merge(axes: list[AxisRef], axis: AxisRef, axis_sizes: dict[str, int]) -> None:
    """Append `axis`, merged into the last ref when it continues it (Shardy's
    addAxisOrMerge)."""
    size = axis_sizes[axis.name]
    if axes and axes[-1].can_merge(axis, size):
        axes[-1] = axes[-1].merge(axis, size)
    else:
        axes.append(axis)


def axes_size(axes, axis_sizes: dict[str, int]) -> int:
    """Product of the sizes of a list of refs."""
    n = 1
    for a in axes:
        n *= a.size(axis_sizes[a.name])
    return n
