"""StableHLO collectives on simulated devices, with the spec's process groups.

Process groups (lists of flattened device ids, replica * partitions + partition):
  channel_id <= 0, no use_global_device_ids -> cross_replica
  channel_id > 0,  no use_global_device_ids -> cross_replica_and_partition
  channel_id > 0,  use_global_device_ids    -> flattened_ids
collective_permute pairs name replicas (channel_id <= 0) or partitions.
"""
from __future__ import annotations

import numpy as np

from sdylog.simulate.mesh import nbytes_of
from sdylog.simulate.ops.reductions import Combiner
from sdylog.simulate.registry import lowering


def _channel_id(ctx) -> int:
    a = ctx.attr("channel_handle")
    if a is None:
        return 0
    from jaxlib.mlir.dialects import stablehlo as shlo
    return shlo.ChannelHandle(a).handle


def replica_groups_of(ctx, attr_name: str = "replica_groups") -> list[list[int]] | None:
    """The groups as written (None when the attribute is absent)."""
    from sdylog.partition.shards import replica_groups
    a = ctx.attr(attr_name)
    if a is None:
        return None
    groups = replica_groups(a, ctx.program.meshes.get)
    if groups is None:
        raise ctx.error("replica groups name a mesh the module does not define")
    return groups


def process_groups(groups, channel_id: int, use_global: bool, nr: int, npart: int,
                   partition_groups: bool = False) -> list[tuple[int, ...]]:
    """`partition_groups`: ops whose channel makes groups of partitions (all_to_all,
    collective_broadcast: cross_partition) instead of replicas and partitions."""
    if partition_groups and channel_id > 0:
        groups = groups or [list(range(npart))]
        return [tuple(r * npart + p for p in g) for r in range(nr) for g in groups]
    if channel_id <= 0 and not use_global:
        groups = groups or [list(range(nr))]
        return [tuple(r * npart + p for r in g) for p in range(npart) for g in groups]
    if not use_global:
        groups = groups or [list(range(nr))]
        return [tuple(r * npart + p for p in range(npart) for r in g) for g in groups]
    groups = groups or [list(range(nr * npart))]
    return [tuple(g) for g in groups]


class GroupFinder:
    """Device -> its process group, computed once per (replicas, partitions)."""

    def __init__(self, ctx, groups, channel_id, use_global, partition_groups=False):
        self.partition_groups = partition_groups
        self.groups = groups
        self.channel_id = channel_id
        self.use_global = use_global
        self.ctx = ctx
        self._cache: dict = {}

    def __call__(self, rt) -> tuple[int, ...]:
        key = (rt.num_replicas, rt.num_partitions)
        table = self._cache.get(key)
        if table is None:
            table = {}
            for g in process_groups(self.groups, self.channel_id, self.use_global, *key,
                                    partition_groups=self.partition_groups):
                for d in g:
                    table[d] = g
            self._cache[key] = table
        g = table.get(rt.device_id)
        if g is None:
            raise self.ctx.fail_at_run(f"device {rt.device_id} is in none of the collective's process groups")
        return g


def _finder(ctx, partition_groups: bool = False) -> GroupFinder:
    return GroupFinder(ctx, replica_groups_of(ctx) or [], _channel_id(ctx), ctx.bool_attr("use_global_device_ids"),
                       partition_groups)


def gather_group(ctx, rt, group, kind, values, combine=None) -> list:
    """Every group member's `values`, in group order (this device's alone when
    the group is itself). With `combine`: combine(that list), computed once
    for the group and shared by its members (Communicator.exchange)."""
    if len(group) == 1:
        return [values] if combine is None else combine([values])
    if rt.comm is None:
        raise ctx.fail_at_run(f"'{ctx.op.name}' needs the {len(group)} devices {list(group)}; "
                              "run it on a simulated mesh (interpreter.run_parallel, sdylog simulate)")
    nbytes = nbytes_of(values)
    if combine is not None:
        return rt.comm.exchange(rt, group, kind, values, nbytes, combine=combine)
    got = rt.comm.exchange(rt, group, kind, values, nbytes)
    return [got[d] for d in group]


def _shared(arrays: list) -> list:
    """Arrays every device of a group holds: read-only, so that no device
    writes into them in place (elementwise.py's buffer reuse checks)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


def reduce_group(ctx, rt, group, kind, values, comb: Combiner, env) -> list:
    """The combination by `comb` of every member's `values`, in group order.
    An element-wise body gives every member the same result (it cannot
    depend on the device running it): one member computes it for the group."""
    def total(per):
        acc = per[0]
        for other in per[1:]:
            acc = comb.apply(acc, other, env, rt)
        return [np.array(v, dtype=dt) for v, dt in zip(acc, comb.dtypes)]
    if comb.vectorized:
        return gather_group(ctx, rt, group, kind, values, lambda per: _shared(total(per)))
    return total(gather_group(ctx, rt, group, kind, values))


@lowering("stablehlo.all_reduce", "stablehlo.cross-replica-sum")
def lower_all_reduce(ctx):
    n = len(ctx.operands)
    comb = Combiner(ctx, ctx.op.regions[0], n, [ctx.dtype(v) for v in ctx.results])
    find = _finder(ctx)
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        group = find(rt)
        res = reduce_group(ctx, rt, group, "all_reduce", [np.asarray(env[i]) for i in ins], comb, env)
        for s, v in zip(outs, res):
            env[s] = v
    return step


@lowering("stablehlo.all_gather")
def lower_all_gather(ctx):
    dim = ctx.int_attr("all_gather_dim")
    find = _finder(ctx)
    ins, outs = ctx.ins(), ctx.outs()

    def concat(per):
        return _shared([np.concatenate([p[k] for p in per], axis=dim) for k in range(len(outs))])

    def step(env, rt):
        group = find(rt)
        for s, v in zip(outs, gather_group(ctx, rt, group, "all_gather", [np.asarray(env[i]) for i in ins], concat)):
            env[s] = v
    return step


@lowering("stablehlo.reduce_scatter")
def lower_reduce_scatter(ctx):
    dim = ctx.int_attr("scatter_dimension")
    comb = Combiner(ctx, ctx.op.regions[0], 1, [ctx.result_dtype])
    find = _finder(ctx)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        group = find(rt)
        full = reduce_group(ctx, rt, group, "reduce_scatter", [np.asarray(env[a])], comb, env)[0]
        size = full.shape[dim] // len(group)
        i = group.index(rt.device_id)
        idx = [slice(None)] * full.ndim
        idx[dim] = slice(i * size, (i + 1) * size)
        env[o] = np.array(full[tuple(idx)], dtype=comb.dtypes[0])
    return step


@lowering("stablehlo.all_to_all")
def lower_all_to_all(ctx):
    split = ctx.int_attr("split_dimension")
    concat = ctx.int_attr("concat_dimension")
    count = ctx.int_attr("split_count")
    find = _finder(ctx, partition_groups=True)
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        group = find(rt)
        if len(group) != count:
            raise ctx.fail_at_run(f"split_count {count} but the process group has {len(group)} devices")
        pieces = [np.split(np.asarray(env[i]), count, axis=split) for i in ins]
        per = gather_group(ctx, rt, group, "all_to_all", pieces)
        me = group.index(rt.device_id)
        for k, s in enumerate(outs):
            env[s] = np.concatenate([p[k][me] for p in per], axis=concat)
    return step


@lowering("stablehlo.collective_permute")
def lower_collective_permute(ctx):
    pairs = np.array(ctx.attr("source_target_pairs")).reshape(-1, 2).tolist()
    channel = _channel_id(ctx)
    a, o = ctx.in_slot(), ctx.out_slot()
    shape, dt = ctx.result_shape, ctx.result_dtype

    def step(env, rt):
        nr, npart = rt.num_replicas, rt.num_partitions
        if channel <= 0:   # pairs of replicas, within this partition
            to_dev = lambda i: i * npart + rt.partition_id
            group = tuple(r * npart + rt.partition_id for r in range(nr))
        else:              # pairs of partitions, within this replica
            to_dev = lambda i: rt.replica_id * npart + i
            group = tuple(rt.replica_id * npart + p for p in range(npart))
        per = gather_group(ctx, rt, group, "collective_permute", [np.asarray(env[a])])
        by_dev = dict(zip(group, per))
        src = [to_dev(s) for s, t in pairs if to_dev(t) == rt.device_id]
        env[o] = np.array(by_dev[src[0]][0]) if src else np.zeros(shape, dtype=dt)
    return step


@lowering("stablehlo.collective_broadcast")
def lower_collective_broadcast(ctx):
    find = _finder(ctx, partition_groups=True)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        group = find(rt)
        per = gather_group(ctx, rt, group, "collective_broadcast", [np.asarray(env[a])])
        env[o] = np.array(per[0][0])
    return step


@lowering("stablehlo.partition_id", "stablehlo.replica_id")
def lower_device_id(ctx):
    """The running device's partition_id or replica_id (the field of the runtime
    named like the op)."""
    o = ctx.out_slot()
    dt = ctx.result_dtype
    field = ctx.op.operation.name.split(".", 1)[1]

    def step(env, rt):
        env[o] = np.asarray(getattr(rt, field), dtype=dt)
    return step
