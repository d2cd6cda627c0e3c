"""How one reshard becomes a sequence of collectives (Shardy's
`-sdy-reshard-to-collectives`, its CollectiveInserter).

From the source sharding's dimension axes to the target's, at most two
rounds of five steps: all_slice (shard more), collective_permute (swap axes
for others of the same sharded size, or move to another device order),
all_to_all where the axes land in place, all_to_all anywhere, all_gather
(shard less). Each step reads and rewrites a state: per dimension the axes
still to move (`moving`, the current axes past their common prefix with the
target), the target axes still missing (`missing`), and all current axes
(`current`), plus per-dimension capacities, the set of moving axes and where
each missing axis belongs. The state starts from the two shardings with
their sub-axes aligned (an axis that partly overlaps one of the other side
is cut into the pieces both sides share) and their common prefixes removed.

Why this is Python and not Datalog. Each step is a fold over dimensions and
axes in order, whose decisions depend on what the same step did just before:
capacities shrink as axes are placed, an axis cut to fit a capacity puts its
remainder at the front of the list still to place (and the target axes are
re-aligned to the cut), all-to-alls repeat per dimension while one applies,
and the all-gather step reads the state the all-to-alls left. In Datalog each
of the ten steps would need its own copy of the state relations (a state
relation indexed by step and defined through negation of the previous step
is not stratifiable, and the rules have no components to instantiate per
step), and the folds would become recursions over (dimension, position,
capacity) counters: a transliteration of this loop, not rules anyone would
read. So the sequence is computed here, once per reshard, as Shardy does;
what reads naturally as rules is in rules/collectives.dl: the chain of
shardings through a reshard's collectives, each collective's local block,
group size and ring-model bytes, and the totals (one evaluation per pass run,
sdylog/partition/collective_costs.py).

Faithful to Shardy's code as compiled, including one quirk: the all-gather
step of a dimension gathers all of its moving axes when the last one is not
a target axis (and none when it is), where the comment in Shardy's source
intends the suffix of non-target axes (its reverse iterator steps past the
start of the list); only the last axis leaves the set of moving axes.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from sdylog.model.axis import AXIS_ORDER, AxisRef, SubAxis, add_or_merge, first_overlapping

ALL_SLICE = "all_slice"
COLLECTIVE_PERMUTE = "collective_permute"
ALL_TO_ALL = "all_to_all"
ALL_GATHER = "all_gather"

Dims = tuple[tuple[AxisRef, ...], ...]


@dataclass(frozen=True)
class Collective:
    """One collective of a reshard's decomposition."""
    kind: str                   # ALL_SLICE, COLLECTIVE_PERMUTE, ALL_TO_ALL or ALL_GATHER
    result: Dims                # the dimension axes after it (its closed out_sharding)
    axes: Dims = ()             # all_slice / all_gather: per dimension; all_to_all: (moved axes,)
    src_dim: int = -1           # all_to_all: from which dimension to which
    tgt_dim: int = -1
    on_target_mesh: bool = False  # its out_sharding is on the target's mesh (after a device reorder)


def plan_reshard(source, target, shape, axis_sizes: dict[str, int],
                 reorders_devices: bool = False) -> list[Collective]:
    """The collectives that take dimension axes `source` to `target` (lists of
    AxisRef per dimension) for a tensor of `shape` on a mesh with
    `axis_sizes`; `reorders_devices`: the target mesh has the same axes in
    another device order. Empty when nothing moves."""
    return _Planner(source, target, shape, axis_sizes, reorders_devices).plan()


def align_sub_axes(axes: list[AxisRef], ordered_others: list[AxisRef], axis_sizes: dict[str, int]) -> None:
    """Cut every axis of `axes` that partly overlaps one of `ordered_others`
    (sorted by AXIS_ORDER) into the prefix, overlap and suffix pieces
    (Shardy's alignSubAxesByDecomposition), in place."""
    i = 0
    while i < len(axes):
        axis = axes[i]
        size = axis_sizes[axis.name]
        j = first_overlapping(axis, ordered_others, axis_sizes)
        done_with_axis = False
        while (j is not None and j < len(ordered_others) and ordered_others[j].can_coexist(axis, size)
               and not ordered_others[j].contains(axis, size) and ordered_others[j].overlaps(axis, size)):
            other = ordered_others[j]
            del axes[i]
            prefix = axis.prefix_without_overlap(other, size)
            if prefix is not None:
                axes.insert(i, prefix)
                i += 1
            axes.insert(i, axis.overlap(other, size))
            i += 1
            suffix = axis.suffix_without_overlap(other, size)
            if suffix is None:
                done_with_axis = True   # i is at the next axis already
                break
            axes.insert(i, suffix)      # the suffix is checked against the next other axis only
            axis = suffix
            j += 1
        if not done_with_axis:
            i += 1


def _align_all(axes_per_dim: list[list[AxisRef]], others: list[AxisRef], axis_sizes) -> None:
    if not others:
        return
    ordered = sorted(others, key=AXIS_ORDER)
    for axes in axes_per_dim:
        align_sub_axes(axes, ordered, axis_sizes)


def _divisible(a: int, b: int) -> bool:
    return a % b == 0 or b % a == 0


class _Planner:
    def __init__(self, source, target, shape, axis_sizes, reorders_devices):
        self.sizes = axis_sizes
        self.shape = list(shape)
        self.rank = len(self.shape)
        self.moving = [list(d) for d in source]     # Shardy's inAxesPerDim
        self.missing = [list(d) for d in target]    # outAxesPerDim
        self.current = [list(d) for d in source]    # currentAxesPerDim
        self.capacity = [1] * self.rank
        self.on_target_mesh = not reorders_devices
        self.collectives: list[Collective] = []
        in_axes = [a for d in self.moving for a in d]
        out_axes = [a for d in self.missing for a in d]
        _align_all(self.moving, out_axes, axis_sizes)
        _align_all(self.missing, in_axes, axis_sizes)
        for moving, missing in zip(self.moving, self.missing, strict=True):
            while moving and missing and moving[0] == missing[0]:
                del moving[0]
                del missing[0]
        self.moving_set = {a for d in self.moving for a in d}
        self.index_missing()

    # --- helpers ------------------------------------------------------------------
    def size(self, axis: AxisRef) -> int:
        return axis.size(self.sizes[axis.name])

    def sharded_size(self, axes) -> int:
        n = 1
        for a in axes:
            n *= self.size(a)
        return n

    def index_missing(self) -> None:
        """Where each missing axis belongs: (dimension, index); the first place wins."""
        self.target_of: dict[AxisRef, tuple[int, int]] = {}
        for d, axes in enumerate(self.missing):
            for i, a in enumerate(axes):
                self.target_of.setdefault(a, (d, i))

    def within_capacity(self, axis: AxisRef, capacity: int):
        """(the part of `axis` that fits `capacity`, the remainder, the capacity left)."""
        size = self.size(axis)
        if capacity <= 1 or not _divisible(size, capacity):
            return None, None, capacity
        if capacity >= size:
            return axis, None, capacity // size
        within = AxisRef(axis.name, SubAxis(axis.pre_size, capacity))
        remainder = AxisRef(axis.name, SubAxis(axis.pre_size * capacity, size // capacity))
        return within, remainder, 1

    def pop_current(self, d: int, popped) -> None:
        """Take the axes `popped` (in order, possibly pieces of merged ones) off
        the end of current[d]."""
        current = self.current[d]
        for a in reversed(popped):
            last = current[-1]
            prefix = last.prefix_without_overlap(a, self.sizes[last.name])
            if prefix is None:
                current.pop()
            else:
                current[-1] = prefix

    def done(self) -> bool:
        return self.on_target_mesh and not any(self.moving) and not any(self.missing)

    def emit(self, kind: str, **fields) -> None:
        result = tuple(tuple(d) for d in self.current)
        self.collectives.append(Collective(kind, result, on_target_mesh=self.on_target_mesh, **fields))

    def distribute(self, available_of, to_front: bool, on_add=None) -> None:
        """Place available axes into the dimensions' capacities, dimension by
        dimension (Shardy's distributeInAxesWithinCapacity): an axis that does
        not fit is skipped, one larger than the capacity is cut and its
        remainder goes back to the front of the list."""
        cut: list[AxisRef] = []
        for d in range(self.rank):
            moving = self.moving[d]
            at = 0 if to_front else len(moving)
            available = available_of(d)
            i = 0
            while i < len(available) and self.capacity[d] > 1:
                within, remainder, self.capacity[d] = self.within_capacity(available[i], self.capacity[d])
                if within is None:
                    i += 1
                    continue
                del available[i]
                moving.insert(at, within)
                at += 1
                self.moving_set.add(within)
                if on_add is not None:
                    on_add(within, d)
                if remainder is not None:
                    cut.append(within)
                    available.insert(0, remainder)
                    i += 1
        _align_all(self.missing, cut, self.sizes)

    # --- the steps --------------------------------------------------------------------
    def plan(self) -> list[Collective]:
        for _ in range(2):
            if self.done():
                break
            self.all_slice()
            self.collective_permute()
            self.all_to_alls(out_of_order=False)
            self.all_to_alls(out_of_order=True)
            self.all_gather()
        return self.collectives

    def all_slice(self) -> None:
        slicing = [[] for _ in range(self.rank)]
        sliced = False
        for d in range(self.rank):
            have, want = self.sharded_size(self.moving[d]), self.sharded_size(self.missing[d])
            self.capacity[d] = want // gcd(have, want)

        # 1. Slice a source dimension along the target axes that will follow
        #    it there, for an all-to-all that then lands them in order.
        for d in range(self.rank):
            run = self.slice_for_all_to_all(d)
            if run is None:
                continue
            sliced = True
            for a in run:
                self.moving[d].append(a)
                self.moving_set.add(a)
                add_or_merge(slicing[d], a, self.sizes)
                add_or_merge(self.current[d], a, self.sizes)

        # 2. Slice missing axes in their own dimension, within its capacity.
        available: list[AxisRef] = []
        for d in range(self.rank):
            moving, missing = self.moving[d], self.missing[d]
            i = 0
            while i < len(missing):
                a = missing[i]
                if a in self.moving_set:
                    i += 1
                    continue
                within, remainder, self.capacity[d] = self.within_capacity(a, self.capacity[d])
                if within is None:
                    available.append(a)
                    i += 1
                    continue
                sliced = True
                add_or_merge(slicing[d], within, self.sizes)
                add_or_merge(self.current[d], within, self.sizes)
                if not moving and i == 0:
                    del missing[0]          # in place: part of the common prefix now
                else:
                    self.moving_set.add(within)
                    moving.append(within)
                    missing[i] = within
                    i += 1
                if remainder is not None:
                    missing.insert(i, remainder)
                    i += 1
                    available.append(remainder)

        # 3. Slice the rest in the first dimensions with capacity left.
        def add(a, d):
            nonlocal sliced
            sliced = True
            add_or_merge(slicing[d], a, self.sizes)
            add_or_merge(self.current[d], a, self.sizes)
        self.distribute(lambda d: available, to_front=False, on_add=add)
        self.index_missing()
        if sliced:
            self.emit(ALL_SLICE, axes=tuple(tuple(s) for s in slicing))

    def slice_for_all_to_all(self, src: int) -> list[AxisRef] | None:
        """Target axes to slice on `src` so that a later all-to-all takes them,
        with the moving axes they follow, to their target dimension in order
        (Shardy's getAxesToSliceForAllToAll); divides that dimension's capacity."""
        moving = self.moving[src]
        if not moving or self.missing[src]:
            return None
        place = self.target_of.get(moving[-1])
        if place is None:
            return None
        tgt = place[0]
        if self.moving[tgt]:
            return None
        wanted = self.missing[tgt]
        # (the index of target_of can be stale after all-to-alls; a list
        # iterator stepped past Shardy's failed find wraps to the front)
        start = wanted.index(moving[-1]) + 1 if moving[-1] in wanted else 0
        if start == len(wanted) or wanted[start] in self.moving_set:
            return None
        i, j, common = len(moving) - 1, start - 1, 1
        while i >= 0 and j >= 0 and moving[i] == wanted[j]:
            common *= self.size(moving[i])
            i -= 1
            j -= 1
        for k in range(i, -1, -1):
            other = self.target_of.get(moving[k])
            if other is not None and other[0] == tgt:
                return None         # a target axis out of order: a permute is needed
        end, added = start, 1
        while end < len(wanted) and wanted[end] not in self.moving_set:
            added *= self.size(wanted[end])
            end += 1
        if self.shape[src] % (self.sharded_size(self.current[src]) * added) != 0:
            return None
        self.capacity[tgt] //= common * added
        return wanted[start:end]

    def should_permute(self) -> bool:
        """Shardy's shouldCollectivePermute: axes can be swapped for others of
        the same size, or put in the order all-to-alls and all-gathers need."""
        spare_in = spare_out = None
        for d in range(self.rank):
            moving, missing = self.moving[d], self.missing[d]
            if moving and missing and _divisible(self.size(moving[0]), self.size(missing[0])):
                return True
            for a in missing:
                if a not in self.moving_set:
                    spare_out = a
            last_dim, last_index, seen = None, 0, set()
            for a in moving:
                place = self.target_of.get(a)
                dim = None
                if place is not None:
                    dim, index = place
                    if (dim == d or dim in seen) and (last_dim != dim or index != last_index + 1):
                        return True     # out of order, or not contiguous
                    seen.add(dim)
                    last_index = index
                elif last_dim is not None and not missing:
                    return True         # an axis to gather behind one to move away
                else:
                    spare_in = a
                last_dim = dim
        return (spare_out is not None and spare_in is not None
                and _divisible(self.size(spare_out), self.size(spare_in)))

    def permute(self) -> None:
        """Shardy's performCollectivePermute: each dimension keeps its sharded
        size; target axes go in place first, then the other missing axes
        anywhere, then the axes to gather back at the front."""
        spare_out: list[AxisRef] = []
        spare_in = [[] for _ in range(self.rank)]
        self.moving_set = set()
        for d in range(self.rank):
            moving, missing = self.moving[d], self.missing[d]
            self.capacity[d] = self.sharded_size(moving)
            used = self.capacity[d]
            self.pop_current(d, moving)
            while self.capacity[d] > 1 and missing:
                within, remainder, self.capacity[d] = self.within_capacity(missing[0], self.capacity[d])
                if within is None:
                    break
                del missing[0]
                add_or_merge(self.current[d], within, self.sizes)
                if remainder is not None:
                    missing.insert(0, remainder)
            spare_out.extend(missing)
            used //= self.capacity[d]
            moving[:] = [a for a in moving if a not in self.target_of]
            while used > 1 and moving:
                within, remainder, used = self.within_capacity(moving[0], used)
                if within is None:
                    break
                del moving[0]
                spare_in[d].append(within)
                if remainder is not None:
                    moving.insert(0, remainder)
            spare_in[d][0:0] = moving
            moving.clear()
        self.distribute(lambda d: spare_out, to_front=False)
        self.distribute(lambda d: spare_in[d], to_front=True)
        rest = [a for axes in spare_in for a in axes]
        self.distribute(lambda d: rest, to_front=True)
        self.index_missing()
        for d in range(self.rank):
            for a in self.moving[d]:
                add_or_merge(self.current[d], a, self.sizes)

    def collective_permute(self) -> None:
        if self.should_permute():
            self.permute()
        elif self.on_target_mesh:
            return
        self.on_target_mesh = True
        self.emit(COLLECTIVE_PERMUTE)

    def all_to_alls(self, out_of_order: bool) -> None:
        for src in range(self.rank):
            while self.all_to_all(src, out_of_order):
                pass

    def all_to_all(self, src: int, out_of_order: bool) -> bool:
        """Move the longest run at the end of moving[src] whose axes all belong
        to one other dimension there (Shardy's getAllToAllInfo); unless
        `out_of_order`, only when they land at the front of what is missing."""
        moving = self.moving[src]
        k, tgt = len(moving), None
        while k > 0:
            place = self.target_of.get(moving[k - 1])
            if place is None or place[0] == src or (tgt is not None and place[0] != tgt):
                break
            tgt = place[0]
            k -= 1
        if tgt is None:
            return False
        run = moving[k:]
        wanted = self.missing[tgt]
        if not out_of_order and wanted[:len(run)] != run:
            return False
        self.pop_current(src, run)
        del moving[k:]
        axes: list[AxisRef] = []
        target_moving = self.moving[tgt]
        for a in run:
            add_or_merge(axes, a, self.sizes)
            add_or_merge(self.current[tgt], a, self.sizes)
            self.moving_set.discard(a)
            if not target_moving and wanted and wanted[0] == a:
                del wanted[0]
            else:
                target_moving.append(a)
                self.moving_set.add(a)
        self.emit(ALL_TO_ALL, axes=(tuple(axes),), src_dim=src, tgt_dim=tgt)
        return True

    def all_gather(self) -> None:
        gathering = []
        for d in range(self.rank):
            moving = self.moving[d]
            axes: list[AxisRef] = []
            if moving and moving[-1] not in self.target_of:
                # As compiled: all moving axes of the dimension (see the module docstring).
                self.moving_set.discard(moving[-1])
                self.pop_current(d, moving)
                for a in moving:
                    add_or_merge(axes, a, self.sizes)
                moving.clear()
            gathering.append(tuple(axes))
        if any(gathering):
            self.emit(ALL_GATHER, axes=tuple(gathering))
