"""Device -> shard index maps and device groups (sdylog.partition.shards)."""
from __future__ import annotations

import numpy as np
import pytest

from sdylog.ir.diagnostics import SdylogError
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.model.mesh import Mesh, MeshAxis
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.partition.shards import (assemble, device_groups, local_shape, offset_table, permutation_pairs,
                                     shard_index, shard_slices)

X, Y, Z = AxisRef("x"), AxisRef("y"), AxisRef("z")
M24 = Mesh((MeshAxis("x", 2), MeshAxis("y", 4)))
M242 = Mesh((MeshAxis("x", 2), MeshAxis("y", 4), MeshAxis("z", 2)))


def sub(name, pre, size):
    return AxisRef(name, SubAxis(pre, size))


def sh(*dims, mesh="m"):
    return TensorSharding(mesh, tuple(DimSharding(tuple(d)) for d in dims))


def test_shard_index_reads_axes_major_to_minor():
    # device d of mesh x=2, y=4 sits at (d // 4, d % 4)
    assert [shard_index(d, M24, [X, Y]) for d in range(8)] == list(range(8))
    assert [shard_index(d, M24, [Y, X]) for d in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert [shard_index(d, M24, [sub("y", 1, 2)]) for d in range(8)] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert [shard_index(d, M24, [sub("y", 2, 2)]) for d in range(8)] == [0, 1, 0, 1, 0, 1, 0, 1]


def test_device_order_of_the_mesh():
    m = Mesh((MeshAxis("x", 4),), (1, 2, 3, 0))
    assert [shard_index(d, m, [X]) for d in range(4)] == [3, 0, 1, 2]


@pytest.mark.parametrize("mesh,axes,groups", [
    (M24, [sub("y", 1, 2)], [[0, 2], [1, 3], [4, 6], [5, 7]]),
    (M24, [X, sub("y", 1, 2)], [[0, 2, 4, 6], [1, 3, 5, 7]]),
    (M242, [Y, X], [[0, 8, 2, 10, 4, 12, 6, 14], [1, 9, 3, 11, 5, 13, 7, 15]]),
    (M242, [X, sub("y", 2, 2)], [[0, 2, 8, 10], [1, 3, 9, 11], [4, 6, 12, 14], [5, 7, 13, 15]]),
])
def test_device_groups(mesh, axes, groups):
    assert device_groups(axes, mesh) == groups


def test_offset_tables_and_local_shapes():
    assert offset_table(M242, [Z, X], 8) == [0, 16, 0, 16, 0, 16, 0, 16, 8, 24, 8, 24, 8, 24, 8, 24]
    s = sh([X], [Y])
    assert local_shape((8, 16), s, M24) == (4, 4)
    with pytest.raises(SdylogError, match="not divisible"):
        local_shape((6, 10), sh([], [Y]), M24)


def test_slices_assemble_round_trip():
    s = sh([Y], [X])
    full = np.arange(8 * 6).reshape(8, 6)
    blocks = {d: full[shard_slices(full.shape, s, M24, d)] for d in range(8)}
    assert all(b.shape == (2, 3) for b in blocks.values())
    np.testing.assert_array_equal(assemble(full.shape, s, M24, blocks, full.dtype), full)


def test_permutation_pairs():
    pairs = permutation_pairs(sh([X], [sub("y", 2, 2)]), M24, sh([sub("y", 2, 2)], [X]), M24)
    assert pairs == [(0, 0), (1, 4), (2, 2), (3, 6), (4, 1), (5, 5), (6, 3), (7, 7)]
    a, b = Mesh((MeshAxis("x", 4),)), Mesh((MeshAxis("x", 4),), (1, 2, 3, 0))
    assert permutation_pairs(sh([X]), a, sh([X]), b) == [(0, 1), (1, 2), (2, 3), (3, 0)]
