"""Where each device's piece of a sharded tensor lives.

A device's logical position is its index in the mesh's device order; its
coordinate along a mesh axis is that position read in mixed radix over the
axes (row-major). A sub-axis `"x":(pre)size` reads `size` digits of the
axis coordinate starting `pre` from the major end. A list of axes (a
dimension's sharding, a collective's axes) names a shard index: the axes'
coordinates read major to minor.
"""
from __future__ import annotations

from sdylog.ir.diagnostics import SdylogError
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding


def axis_size(ref: AxisRef, mesh: Mesh) -> int:
    return ref.size(mesh.axis_sizes[ref.name])


def axes_size(refs, mesh: Mesh) -> int:
    n = 1
    for r in refs:
        n *= axis_size(r, mesh)
    return n


def logical_position(device_id: int, mesh: Mesh) -> int:
    ids = mesh.device_ids
    if ids:
        try:
            return ids.index(device_id)
        except ValueError:
            raise SdylogError(f"device {device_id} is not in the mesh's device ids {list(ids)}") from None
    if not 0 <= device_id < mesh.num_devices:
        raise SdylogError(f"device {device_id} is outside a mesh of {mesh.num_devices} devices")
    return device_id


def axis_coordinate(device_id: int, mesh: Mesh, ref: AxisRef) -> int:
    """The device's coordinate along an axis or sub-axis."""
    pos = logical_position(device_id, mesh)
    stride = 1
    found = False
    for a in reversed(mesh.axes):
        if a.name == ref.name:
            found = True
            full = a.size
            break
        stride *= a.size
    if not found:
        raise SdylogError(f"axis '{ref.name}' is not in the mesh")
    coord = (pos // stride) % full
    lo, hi = ref.interval(full)
    minor = full // hi  # sizes more minor than the sub-axis
    return (coord // minor) % (hi // lo)


def shard_index(device_id: int, mesh: Mesh, refs) -> int:
    """The device's index along a list of axes (major first)."""
    idx = 0
    for r in refs:
        idx = idx * axis_size(r, mesh) + axis_coordinate(device_id, mesh, r)
    return idx


def atomic_axes(mesh: Mesh, refs) -> list[AxisRef]:
    """The mesh's axes, in mesh order, cut at every boundary of the given refs
    (so each given ref is a run of consecutive atomic pieces)."""
    cuts: dict[str, set[int]] = {a.name: {1, a.size} for a in mesh.axes}
    for r in refs:
        if r.sub is not None:
            cuts[r.name] |= {r.sub.pre_size, r.sub.next_pre_size}
    out = []
    for a in mesh.axes:
        points = sorted(cuts[a.name])
        if len(points) == 2:
            out.append(AxisRef(a.name))
            continue
        for lo, hi in zip(points, points[1:]):
            out.append(AxisRef.of_interval(a.name, lo, hi, a.size))
    return out


def expand_to_atomic(refs, atoms: list[AxisRef], mesh: Mesh) -> list[AxisRef]:
    """Each ref replaced by the atomic pieces it covers, major first."""
    out = []
    for r in refs:
        full = mesh.axis_sizes[r.name]
        pieces = [a for a in atoms if a.name == r.name and r.contains(a, full)]
        pieces.sort(key=lambda a: a.interval(full)[0])
        out.extend(pieces)
    return out


def device_groups(refs, mesh: Mesh) -> list[list[int]]:
    """Devices grouped by their coordinates on every axis but `refs`; inside a
    group, ordered by their shard index along `refs`. Groups are ordered by the
    other axes' coordinates (mesh order). These are the replica groups of a
    collective over `refs`."""
    refs = list(refs)
    atoms = atomic_axes(mesh, refs)
    covered = expand_to_atomic(refs, atoms, mesh)
    others = [a for a in atoms if a not in covered]
    group_size = axes_size(refs, mesh)
    n_groups = mesh.num_devices // group_size
    groups = [[-1] * group_size for _ in range(n_groups)]
    for d in mesh.devices():
        groups[shard_index(d, mesh, others)][shard_index(d, mesh, refs)] = d
    return groups


def divides(shape, sharding: TensorSharding, mesh: Mesh) -> bool:
    """Whether `sharding` divides every dimension of `shape` evenly (False for
    a sharding of another rank or naming an axis the mesh does not have)."""
    if len(sharding.dims) != len(shape):
        return False
    try:
        return all(n % axes_size(dim.axes, mesh) == 0 for n, dim in zip(shape, sharding.dims))
    except KeyError:
        return False


def divides_on(shape, sharding: TensorSharding, meshes: dict[str, Mesh]) -> bool:
    """divides, on the mesh `sharding` names among `meshes` (False for a mesh
    not there: the facts report it)."""
    from sdylog.partition.ir_shardings import resolve_mesh
    try:
        return divides(shape, sharding, resolve_mesh(sharding, meshes))
    except SdylogError:
        return False


def local_shape(global_shape, sharding: TensorSharding, mesh: Mesh, allow_uneven: bool = False) -> tuple[int, ...]:
    """The per-device shape of a tensor of `global_shape` with `sharding`."""
    if len(sharding.dims) != len(global_shape):
        raise SdylogError(f"sharding of rank {len(sharding.dims)} on a tensor of rank {len(global_shape)}")
    out = []
    for n, dim in zip(global_shape, sharding.dims):
        k = axes_size(dim.axes, mesh)
        if n % k:
            if not allow_uneven:
                raise SdylogError(f"dimension of size {n} is not divisible by its {k} shards")
            out.append(-(-n // k))
        else:
            out.append(n // k)
    return tuple(out)


def shard_slices(global_shape, sharding: TensorSharding, mesh: Mesh, device_id: int) -> tuple[slice, ...]:
    """The part of the global tensor a device holds (evenly sharded)."""
    local_shape(global_shape, sharding, mesh)   # (raises when uneven)
    return tuple(slice(lo, hi) for lo, hi in shard_bounds(global_shape, sharding, mesh, device_id))


def shard_bounds(global_shape, sharding: TensorSharding, mesh: Mesh, device_id: int) -> tuple[tuple[int, int], ...]:
    """[start, stop) of the device's piece along each dimension. Unevenly
    sharded, every piece has the rounded-up size (XLA pads each device's
    buffer to it), so the last pieces hold less of the tensor, or nothing."""
    loc = local_shape(global_shape, sharding, mesh, allow_uneven=True)
    out = []
    for n, size, dim in zip(global_shape, loc, sharding.dims):
        start = min(shard_index(device_id, mesh, dim.axes) * size, n)
        out.append((start, min(start + size, n)))
    return tuple(out)


def local_group_count(count: int, shards: int) -> int | None:
    """A convolution's group count (feature or batch groups) on each
    device's block of the dimension the groups split, in `shards` shards:
    whole groups per block, or one when each group spans whole blocks; None
    when a block would cut a group unevenly."""
    if count % shards == 0:
        return count // shards
    if shards % count == 0:
        return 1
    return None


def offset_table(mesh: Mesh, refs, shard_size: int) -> list[int]:
    """For device ids 0..N-1: the global offset of its shard along a dimension
    sharded by `refs` (device ids are the mesh's ids, in id order)."""
    n = mesh.num_devices
    return [shard_index(d, mesh, refs) * shard_size for d in range(n)]


def ordered_sharding_axes(sharding: TensorSharding, atoms: list[AxisRef], mesh: Mesh) -> list[AxisRef]:
    """The atomic axes in the order a sharding uses them (dimension by dimension),
    then the ones it does not use, in mesh order: a device's index along this
    list names both its shard and its place among the replicas."""
    used = expand_to_atomic([a for d in sharding.dims for a in d.axes], atoms, mesh)
    seen = []
    for a in used:
        if a not in seen:
            seen.append(a)
    return seen + [a for a in atoms if a not in seen]


def permutation_pairs(in_sharding: TensorSharding, in_mesh: Mesh,
                      out_sharding: TensorSharding, out_mesh: Mesh) -> list[tuple[int, int]]:
    """(source, target) device pairs that move every device's shard of
    `in_sharding` to the device that holds the same data under `out_sharding`."""
    if in_mesh.num_devices != out_mesh.num_devices:
        raise SdylogError("a collective permute between meshes of different sizes is not supported")
    refs = in_sharding.used_axes() + out_sharding.used_axes()
    atoms = atomic_axes(out_mesh, refs)
    out_order = ordered_sharding_axes(out_sharding, atoms, out_mesh)
    in_order = ordered_sharding_axes(in_sharding, atoms, in_mesh)
    by_logical = {shard_index(d, out_mesh, out_order): d for d in range(out_mesh.num_devices)}
    return [(d, by_logical[shard_index(d, in_mesh, in_order)]) for d in range(in_mesh.num_devices)]


def replica_groups(attr, mesh_named) -> list[list[int]] | None:
    """A collective's `replica_groups` as lists of device ids, in either form
    StableHLO writes: a dense matrix (-1 padding dropped) or
    `#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>` (the groups
    of a collective over those axes of the mesh). `mesh_named`: mesh name ->
    Mesh or None; None when the axes form names a mesh it does not know (or
    inlines one: the passes that read these lift meshes to symbols first)."""
    import numpy as np
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from sdylog.model.axis import SubAxis
    if not stablehlo.ReplicaGroupMeshAxesAttr.isinstance(attr):
        rows = np.array(ir.DenseIntElementsAttr(attr))
        if rows.size == 0:
            return []
        rows = rows.reshape(rows.shape[0], -1) if rows.ndim >= 2 else rows.reshape(1, -1)
        return [[int(d) for d in row if d >= 0] for row in rows]
    attr = stablehlo.ReplicaGroupMeshAxesAttr(attr)
    mesh = mesh_named(ir.FlatSymbolRefAttr(attr.mesh).value) if isinstance(attr.mesh, ir.FlatSymbolRefAttr) else None
    if mesh is None:
        return None
    refs = []
    for ax in attr.axes:
        ref = stablehlo.AxisRefAttr(ax)
        sub = ref.sub_axis_info
        if sub is None:
            refs.append(AxisRef(ref.name))
        else:
            sub = stablehlo.SubAxisInfoAttr(sub)
            refs.append(AxisRef(ref.name, SubAxis(sub.pre_size, sub.size)))
    return device_groups(refs, mesh)


def group_of(device_id: int, groups: list[list[int]]) -> list[int]:
    for g in groups:
        if device_id in g:
            return g
    raise SdylogError(f"device {device_id} is in no group")


def assemble(global_shape, sharding: TensorSharding, mesh: Mesh, blocks: dict, dtype):
    """The global tensor from each device's block (device id -> array)."""
    import numpy as np
    out = np.zeros(global_shape, dtype=dtype)
    for d, block in blocks.items():
        out[shard_slices(global_shape, sharding, mesh, d)] = block
    return out
