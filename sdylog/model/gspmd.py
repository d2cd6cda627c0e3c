"""GSPMD shardings (XLA's HloSharding text, `mhlo.sharding = "{...}"`) as
data, and the one mesh on which all of a module's GSPMD shardings are sdy
shardings.

The forms read:

    {replicated}            every device holds the whole tensor
    {maximal device=3}      one device holds it
    {unknown}               no sharding decided yet (open dimensions)
    {devices=[4,1,2]<=[8] last_tile_dim_replicate}
    {devices=[2,4]<=[4,2]T(1,0)}
    {devices=[2,2]0,2,1,3 last_tile_dims={replicated}}
    {{replicated}, {devices=[2,1]<=[2]}}   one per result of an op

A tiled sharding splits the tensor into a grid of tiles (`devices=[...]`, one
entry per dimension, then one per subgroup: the last tile dimension when
`last_tile_dim_replicate`, else those `last_tile_dims={...}` names) and says
which device holds each tile, row-major over the grid: an explicit list, or
an iota: `<=[r0, r1]T(p0, p1)` is iota(r0*r1) reshaped to [r0, r1],
transposed by the permutation, read row-major.

A mesh for them (`mesh_for`): read row-major over the tile grid, the device
ids of most tile assignments are digits of a mixed radix: a run of tiles
steps through devices `stride` apart (`Chunk`). Each tile dimension then
covers some multiplicative intervals [stride, stride*size) of the device id
space; the boundaries of all of them, over all shardings, cut that space into
the mesh's axes (`axis_0` the most major), and each tile dimension becomes the
list of axes its intervals cover. When a tile assignment is not such a
reshape and transposition of the device ids, the device order of the first
one that is not becomes the mesh's `device_ids`, and the others are read
relative to it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh, MeshAxis
from sdylog.model.sharding import DimSharding, TensorSharding

# ------------------------------------------------------------------ the forms


@dataclass(frozen=True)
class Replicated:
    pass


@dataclass(frozen=True)
class Unknown:
    pass


@dataclass(frozen=True)
class Maximal:
    device: int


@dataclass(frozen=True)
class Tiled:
    tile_dims: tuple[int, ...]     # one per tensor dimension, then one per subgroup
    devices: tuple[int, ...]       # the device of each tile, row-major over tile_dims
    subgroups: tuple[str, ...]     # the kinds of the trailing subgroup dims: "replicated", "unreduced"

    @property
    def rank(self) -> int:
        """The rank of the tensors it shards."""
        return len(self.tile_dims) - len(self.subgroups)


GspmdSharding = Replicated | Unknown | Maximal | Tiled


class UnreadableSharding(ValueError):
    """A sharding string in a form sdylog does not read; `form` names it."""

    def __init__(self, text: str, form: str):
        super().__init__(f"cannot read the GSPMD sharding \"{text}\": {form}")
        self.text = text
        self.form = form


_TILED = re.compile(
    r"^devices=\[(?P<dims>[\d,\s]+)\]\s*"
    r"(?:<=\[(?P<reshape>[\d,\s]+)\](?:T\((?P<perm>[\d,\s]+)\))?|(?P<ids>\d+(?:\s*,\s*\d+)*))"
    r"(?P<rest>.*)$", re.S)
_SUBGROUP_KINDS = ("replicated", "unreduced")


def parse_gspmd(text: str) -> list[GspmdSharding]:
    """The shardings an `mhlo.sharding` string holds: one, or one per
    element of a tuple sharding. Raises UnreadableSharding."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise UnreadableSharding(text, "not a {...} sharding")
    inner = body[1:-1].strip()
    if inner.startswith("{"):
        return [one for part in _split_tuple(inner, text) for one in parse_gspmd(part)]
    return [_parse_leaf(inner, text)]


def _split_tuple(inner: str, text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise UnreadableSharding(text, "unbalanced braces")
        elif c == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    if depth:
        raise UnreadableSharding(text, "unbalanced braces")
    parts.append(inner[start:].strip())
    return parts


def _ints(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.replace(" ", "").split(",") if x)


def _parse_leaf(inner: str, text: str) -> GspmdSharding:
    if inner == "replicated":
        return Replicated()
    if inner == "unknown":
        return Unknown()
    if inner == "manual":
        raise UnreadableSharding(text, "a manual sharding ({manual}: shard_map's GSPMD form)")
    m = re.fullmatch(r"maximal\s+device=(\d+)", inner)
    if m:
        return Maximal(int(m[1]))
    m = _TILED.match(inner)
    if not m:
        word = re.match(r"[\w=]*", inner)[0] or inner[:20]
        raise UnreadableSharding(text, f"the form '{word}'")
    dims = _ints(m["dims"])
    n = math.prod(dims)
    if m["ids"] is not None:
        devices = _ints(m["ids"])
    else:
        reshape = _ints(m["reshape"])
        perm = _ints(m["perm"]) if m["perm"] else tuple(range(len(reshape)))
        if math.prod(reshape) != n or sorted(perm) != list(range(len(reshape))):
            raise UnreadableSharding(text, "an iota tile assignment that does not fit its tile dims")
        devices = _iota(reshape, perm)
    if len(devices) != n or sorted(devices) != sorted(set(devices)):
        raise UnreadableSharding(text, f"{len(devices)} device ids for {n} tiles")
    subgroups = _subgroups(m["rest"].strip(), text)
    if len(subgroups) > len(dims):
        raise UnreadableSharding(text, "more subgroup dims than tile dims")
    return Tiled(dims, devices, subgroups)


def _iota(reshape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    """iota(prod(reshape)) reshaped, transposed by perm, read row-major."""
    strides = [math.prod(reshape[k + 1:]) for k in range(len(reshape))]
    shape = [reshape[p] for p in perm]
    out = []
    for pos in range(math.prod(shape)):
        device, rest = 0, pos
        for k in reversed(range(len(shape))):
            rest, digit = divmod(rest, shape[k])
            device += digit * strides[perm[k]]
        out.append(device)
    return tuple(out)


def _subgroups(rest: str, text: str) -> tuple[str, ...]:
    if not rest:
        return ()
    if rest == "last_tile_dim_replicate":
        return ("replicated",)
    m = re.fullmatch(r"last_tile_dims=\{([\w,\s]*)\}", rest)
    if m:
        kinds = tuple(k.strip() for k in m[1].split(",") if k.strip())
        for k in kinds:
            if k not in _SUBGROUP_KINDS:
                raise UnreadableSharding(text, f"a '{k}' subgroup (last_tile_dims)")
        return kinds
    word = rest.split()[0].split("=")[0]
    raise UnreadableSharding(text, f"the attribute '{word}'")


# ------------------------------------------------------------------ one mesh for all


@dataclass(frozen=True)
class Chunk:
    """`size` consecutive tiles (of some block of the tile grid) whose devices
    are `stride` apart: the device-id interval [stride, stride*size)."""
    size: int
    stride: int


def device_chunks(positions: tuple[int, ...]) -> list[Chunk] | None:
    """The chunks, major first, such that the device at each tile (row-major)
    is the sum of its digits times their strides; None when the devices are
    not a reshape and transposition of 0..n-1."""
    n = len(positions)
    if sorted(positions) != list(range(n)):
        return None
    minor_first, block = [], 1
    while block < n:
        stride = positions[block]
        count = n // block
        size = 1
        while size < count and positions[size * block] == size * stride:
            size += 1
        while count % size:   # a run may only end at a digit boundary
            size -= 1
        if size < 2:
            return None
        minor_first.append(Chunk(size, stride))
        block *= size
    chunks = minor_first[::-1]
    if _devices_of(chunks) != positions or not _is_mixed_radix(chunks, n):
        return None
    return chunks


def _devices_of(chunks: list[Chunk]) -> tuple[int, ...]:
    out = [0]
    for c in chunks:
        out = [d + k * c.stride for d in out for k in range(c.size)]
    return tuple(out)


def _is_mixed_radix(chunks: list[Chunk], n: int) -> bool:
    expected = 1
    for c in sorted(chunks, key=lambda c: c.stride):
        if c.stride != expected:
            return False
        expected *= c.size
    return expected == n


def tile_dim_intervals(tile_dims: tuple[int, ...], chunks: list[Chunk]) -> list[list[tuple[int, int]]] | None:
    """Each tile dimension's device-id intervals [lo, hi), major first, cutting
    a chunk where a dimension ends inside it; None when a dimension's size
    and a chunk's share no factor."""
    left = [[c.size, c.stride] for c in chunks]
    out, k = [], 0
    for t in tile_dims:
        intervals = []
        while t > 1:
            while left[k][0] == 1:
                k += 1
            size, stride = left[k]
            g = math.gcd(t, size)
            if g == 1:
                return None
            lo = stride * (size // g)     # the major part of what is left of the chunk
            intervals.append((lo, lo * g))
            left[k][0] = size // g
            t //= g
        out.append(intervals)
    return out


@dataclass(frozen=True)
class GspmdMesh:
    """The mesh a module's tiled shardings are read on, and how."""
    mesh: Mesh
    cuts: tuple[int, ...]             # the axes' boundaries in the device-id space, ascending
    order: tuple[int, ...]            # device id -> logical position (identity for an iota mesh)

    def axes_of(self, lo: int, hi: int) -> list[AxisRef]:
        """The mesh axes that make up the interval [lo, hi), major first."""
        n = len(self.cuts) - 1
        return [AxisRef(f"axis_{n - 1 - i}") for i in reversed(range(n)) if lo <= self.cuts[i] < hi]


def mesh_for(tiled: list[Tiled]) -> tuple[GspmdMesh | None, dict[Tiled, str]]:
    """The mesh for these tiled shardings, and the reason each sharding it
    cannot express is left out (a device count unlike the first's, a tile
    assignment that is no reshape/transposition of the mesh's device order,
    axes that do not nest with the others')."""
    rejected: dict[Tiled, str] = {}
    if not tiled:
        return None, rejected
    n = len(tiled[0].devices)
    order = tuple(range(n))
    device_ids: tuple[int, ...] = ()
    cuts = {1, n}
    for s in tiled:
        if len(s.devices) != n:
            rejected[s] = f"it tiles over {len(s.devices)} devices where the module's first tiling has {n}"
    for s in tiled:
        if s not in rejected and device_chunks(s.devices) is None:
            # the first tile assignment of its own order: the mesh takes its order
            device_ids = s.devices
            order = tuple(_inverse(s.devices))
            break
    for s in tiled:
        if s in rejected:
            continue
        intervals = _intervals(s, order)
        if intervals is None:
            rejected[s] = "its device list is not a reshape and transposition of the mesh's device order"
            continue
        merged = cuts | {b for dim in intervals for iv in dim for b in iv}
        if not _is_chain(merged):
            rejected[s] = "its tiling does not nest with the other shardings' (no common mesh axes)"
            continue
        cuts = merged
    cut_list = tuple(sorted(cuts))
    sizes = [hi // lo for lo, hi in zip(cut_list, cut_list[1:])][::-1]
    axes = tuple(MeshAxis(f"axis_{i}", z) for i, z in enumerate(sizes))
    if device_ids == tuple(range(n)):
        device_ids = ()
    return GspmdMesh(Mesh(axes, device_ids), cut_list, order), rejected


def _inverse(perm: tuple[int, ...]) -> list[int]:
    out = [0] * len(perm)
    for pos, d in enumerate(perm):
        out[d] = pos
    return out


def _intervals(s: Tiled, order: tuple[int, ...]):
    chunks = device_chunks(tuple(order[d] for d in s.devices))
    return None if chunks is None else tile_dim_intervals(s.tile_dims, chunks)


def _is_chain(cuts: set[int]) -> bool:
    ordered = sorted(cuts)
    return all(b % a == 0 for a, b in zip(ordered, ordered[1:]))


def to_sdy(s: GspmdSharding, mesh: GspmdMesh | None, mesh_name: str, rank: int,
           open_dims: frozenset[int] = frozenset()) -> TensorSharding:
    """The sdy sharding of a tensor of `rank` with GSPMD sharding `s` on
    `mesh` (named `mesh_name`): closed dimensions (a GSPMD sharding is
    complete) but `open_dims` (a sharding constraint's unspecified dims); the
    axes of an unreduced subgroup unreduced, those of a replicated one left
    implicit (as JAX writes a PartitionSpec's unused axes); a maximal sharding
    on its one-device mesh (`maximal_mesh_<device>`), with no dimensions.
    `s` is a sharding `mesh_for` did not reject."""
    if isinstance(s, Maximal):
        return TensorSharding(maximal_mesh_name(s.device))
    if isinstance(s, (Replicated, Unknown)):
        closed = isinstance(s, Replicated)
        return TensorSharding(mesh_name, tuple(DimSharding((), closed and d not in open_dims) for d in range(rank)))
    if s.rank != rank:
        raise ValueError(f"a tiling of {s.rank} dimensions on a tensor of rank {rank}")
    axes = [[a for lo, hi in dim for a in mesh.axes_of(lo, hi)] for dim in _intervals(s, mesh.order)]
    dims = tuple(DimSharding(tuple(axes[d]), d not in open_dims) for d in range(rank))
    unreduced = [a for kind, refs in zip(s.subgroups, axes[rank:]) if kind == "unreduced" for a in refs]
    names = [a.name for a in mesh.mesh.axes]
    return TensorSharding(mesh_name, dims, (), tuple(sorted(unreduced, key=lambda r: names.index(r.name))))


def maximal_mesh_name(device: int) -> str:
    return f"maximal_mesh_{device}"
