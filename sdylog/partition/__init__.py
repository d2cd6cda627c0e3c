"""Partitioning logic shared by the simulator and the export passes: which
piece of a sharded tensor each device holds, device groups of collectives,
and the shardings the IR states for values."""
from sdylog.partition.shards import (assemble, atomic_axes, axes_size, axis_coordinate, device_groups,
                                     group_of, local_shape, logical_position, offset_table,
                                     permutation_pairs, shard_index, shard_slices)

__all__ = ["assemble", "atomic_axes", "axes_size", "axis_coordinate", "device_groups", "group_of",
           "local_shape", "logical_position", "offset_table", "permutation_pairs", "shard_index",
           "shard_slices"]
