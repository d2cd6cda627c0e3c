"""Shardy's ops.

On one device (global view: every value is the whole tensor) Shardy's
collectives change nothing, so they are identities; `sdy.manual_computation`
runs its body once per device of its mesh on the manual axes' shards, where
values stay whole on the other axes (the collectives stay identities), and a
manual computation nested there shards and assembles on its own axes. A
value unreduced on manual axes is a partial sum there (Shardy's
TensorShardingAttr: all-reducing it over those axes gives the value): going
in, the whole on the first device of each group along them and zeros on the
others; coming out, the sum of the group's values.

On a simulated mesh (each value is the device's shard) they move data: the
device's shard index along the collective's axes picks which pieces it sends
and keeps, as `sdylog.partition` defines them; reshards (collective_permute,
reshard, sharding_constraint) rebuild the tensor from every device's shard
and cut out the new one.
"""
from __future__ import annotations

import numpy as np

from sdylog.model.sharding import TensorSharding, sharding_per_value
from sdylog.partition import ir_shardings as irs
from sdylog.partition.shards import (assemble, axes_size, device_groups, group_of, shard_index,
                                     shard_slices)
from sdylog.simulate.constants import elements_to_array
from sdylog.simulate.mesh import DeviceRun, nbytes_of, run_on_devices
from sdylog.simulate.registry import lowering


def _mesh_of(ctx, sharding: TensorSharding):
    try:
        return irs.resolve_mesh(sharding, ctx.program.meshes)
    except Exception as e:
        raise ctx.error(str(e)) from None


def _out(ctx):
    s = TensorSharding.from_attr(ctx.attr("out_sharding"))
    return s, _mesh_of(ctx, s)


def _all_devices(ctx, rt, mesh):
    n = rt.num_replicas * rt.num_partitions
    if n != mesh.num_devices:
        raise ctx.fail_at_run(f"'{ctx.op.name}' on a mesh of {mesh.num_devices} devices, "
                              f"but {n} devices run")
    return tuple(range(n))


def _exchange_all(ctx, rt, mesh, kind, value):
    group = _all_devices(ctx, rt, mesh)
    return rt.comm.exchange(rt, group, kind, value, nbytes_of([value]))


def _identity(ctx):
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = env[a]
    return step


@lowering("sdy.all_gather")
def lower_all_gather(ctx):
    _, mesh = _out(ctx)
    per_dim = irs.axis_ref_lists(ctx.attr("gathering_axes"))
    refs = [a for axes in per_dim for a in axes]
    groups = device_groups(refs, mesh)
    a, o = ctx.in_slot(), ctx.out_slot()
    dt = ctx.result_dtype

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        x = np.asarray(env[a])
        got = _exchange_all(ctx, rt, mesh, "sdy.all_gather", x)
        shape = [n * axes_size(axes, mesh) for n, axes in zip(x.shape, per_dim)]
        out = np.empty(shape, dtype=dt)
        for p in group_of(rt.device_id, groups):
            idx = tuple(slice(shard_index(p, mesh, axes) * n, (shard_index(p, mesh, axes) + 1) * n)
                        for n, axes in zip(x.shape, per_dim))
            out[idx] = got[p]
        env[o] = out
    return step


def _slice_local(x, per_dim, mesh, device):
    idx = []
    for n, axes in zip(x.shape, per_dim):
        k = axes_size(axes, mesh)
        size = n // k
        i = shard_index(device, mesh, axes)
        idx.append(slice(i * size, (i + 1) * size))
    return x[tuple(idx)]


@lowering("sdy.all_slice")
def lower_all_slice(ctx):
    _, mesh = _out(ctx)
    per_dim = irs.axis_ref_lists(ctx.attr("slicing_axes"))
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        env[o] = _slice_local(np.asarray(env[a]), per_dim, mesh, rt.device_id)
    return step


def _sum_over(ctx, rt, mesh, groups, x, kind):
    got = _exchange_all(ctx, rt, mesh, kind, x)
    members = group_of(rt.device_id, groups)
    acc = np.array(got[members[0]], copy=True)
    with np.errstate(all="ignore"):
        for p in members[1:]:
            acc = np.logical_or(acc, got[p]) if acc.dtype == np.bool_ else acc + got[p]
    return acc.astype(x.dtype, copy=False)


@lowering("sdy.all_reduce")
def lower_all_reduce(ctx):
    _, mesh = _out(ctx)
    refs = irs.axis_ref_list(ctx.attr("reduction_axes"))
    groups = device_groups(refs, mesh)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        env[o] = _sum_over(ctx, rt, mesh, groups, np.asarray(env[a]), "sdy.all_reduce")
    return step


@lowering("sdy.reduce_scatter")
def lower_reduce_scatter(ctx):
    _, mesh = _out(ctx)
    per_dim = irs.axis_ref_lists(ctx.attr("reduce_scatter_axes"))
    groups = device_groups([r for axes in per_dim for r in axes], mesh)
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        total = _sum_over(ctx, rt, mesh, groups, np.asarray(env[a]), "sdy.reduce_scatter")
        env[o] = np.array(_slice_local(total, per_dim, mesh, rt.device_id))
    return step


@lowering("sdy.all_to_all")
def lower_all_to_all(ctx):
    _, mesh = _out(ctx)
    params = irs.all_to_all_params(ctx.attr("params"))
    plans = [(p, device_groups(list(p.axes), mesh)) for p in params]
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        x = np.asarray(env[a])
        for p, groups in plans:
            k = axes_size(p.axes, mesh)
            got = _exchange_all(ctx, rt, mesh, "sdy.all_to_all", x)
            me = shard_index(rt.device_id, mesh, p.axes)
            members = group_of(rt.device_id, groups)
            x = np.concatenate([np.split(got[q], k, axis=p.tgt_dim)[me] for q in members], axis=p.src_dim)
        env[o] = x
    return step


@lowering("sdy.replicated_to_unreduced")
def lower_replicated_to_unreduced(ctx):
    """Replicated axes made unreduced. In the global view the value stays
    (`all_reduce . replicated_to_unreduced = id`, Shardy's op docs); on a
    device, as convert-global-to-local lowers it: the first device of each
    group along the axes keeps its value, the others hold zeros."""
    _, mesh = _out(ctx)
    axes = irs.axis_ref_list(ctx.attr("axes"))
    return _made_unreduced(ctx, lambda x, d: x if shard_index(d, mesh, axes) == 0 else np.zeros_like(x))


@lowering("sdy.sharded_to_unreduced")
def lower_sharded_to_unreduced(ctx):
    """Axes sharding dimensions made unreduced. In the global view the
    value stays (`all_reduce . sharded_to_unreduced = all_gather`, Shardy's
    op docs); on a device, as convert-global-to-local lowers it: its shard
    in place in a block as large as the gathered one, zeros elsewhere."""
    _, mesh = _out(ctx)
    per_dim = irs.axis_ref_lists(ctx.attr("axes"))

    def in_place(x, d):
        out = np.zeros([n * axes_size(axes, mesh) for n, axes in zip(x.shape, per_dim)], dtype=x.dtype)
        out[tuple(slice(shard_index(d, mesh, axes) * n, (shard_index(d, mesh, axes) + 1) * n)
                  for n, axes in zip(x.shape, per_dim))] = x
        return out
    return _made_unreduced(ctx, in_place)


def _made_unreduced(ctx, on_device):
    """The step of an op making axes unreduced: the value as it is in the
    global view, `on_device(value, device id)` on a device."""
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = env[a] if rt.global_view else on_device(np.asarray(env[a]), rt.device_id)
    return step


def _reshard_lowering(ctx, out_sharding: TensorSharding, kind: str):
    in_sharding = irs.sharding_of(ctx.operands[0])
    out_mesh = _mesh_of(ctx, out_sharding)
    a, o = ctx.in_slot(), ctx.out_slot()
    global_shape = ctx.result_shape
    dt = ctx.result_dtype
    if in_sharding is None:
        in_sharding = TensorSharding(out_sharding.mesh, tuple(type(d)() for d in out_sharding.dims))
    in_mesh = _mesh_of(ctx, in_sharding)

    def step(env, rt):
        if rt.global_view:
            env[o] = env[a]
            return
        got = _exchange_all(ctx, rt, out_mesh, kind, np.asarray(env[a]))
        full = assemble(global_shape, in_sharding, in_mesh, got, dt)
        env[o] = np.array(full[shard_slices(global_shape, out_sharding, out_mesh, rt.device_id)])
    return step


@lowering("sdy.collective_permute")
def lower_collective_permute(ctx):
    return _reshard_lowering(ctx, TensorSharding.from_attr(ctx.attr("out_sharding")), "sdy.collective_permute")


@lowering("sdy.reshard", "sdy.sharding_constraint")
def lower_reshard(ctx):
    return _reshard_lowering(ctx, TensorSharding.from_attr(ctx.attr("sharding")), ctx.op.name)


@lowering("sdy.propagation_barrier", "sdy.data_flow_edge", "sdy.func_data_flow_edge")
def lower_sdy_identity(ctx):
    return _identity(ctx)


@lowering("sdy.sharding_group")
def lower_no_result(ctx):
    return []


@lowering("sdy.constant")
def lower_constant(ctx):
    value = elements_to_array(ctx.attr("value"))
    value.flags.writeable = False
    o = ctx.out_slot()
    sharding = irs.op_result_sharding(ctx.op, 0)
    mesh = _mesh_of(ctx, sharding) if sharding is not None and not irs.is_replicated(sharding) else None

    def step(env, rt):
        if rt.global_view or mesh is None:
            env[o] = value
        else:
            env[o] = value[shard_slices(value.shape, sharding, mesh, rt.device_id)]
    return step


@lowering("sdy.named_computation")
def lower_named_computation(ctx):
    body = ctx.region(0)
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        for s, v in zip(outs, body.run(env, rt, [env[i] for i in ins])):
            env[s] = v
    return step


@lowering("sdy.manual_computation")
def lower_manual_computation(ctx):
    from sdylog.simulate.program import CompiledFunction, FunctionCompiler
    op = ctx.op
    manual = irs.manual_axes(op.attributes["manual_axes"])
    in_given = sharding_per_value(op.attributes["in_shardings"])
    out_given = sharding_per_value(op.attributes["out_shardings"])
    in_sh = [irs.only_axes(s, manual) for s in in_given]
    out_sh = [irs.only_axes(s, manual) for s in out_given]
    # (the manual axes each value is unreduced on: a partial sum over them)
    in_unreduced = [[a for a in s.unreduced if a.name in manual] for s in in_given]
    out_unreduced = [[a for a in s.unreduced if a.name in manual] for s in out_given]
    # The body runs on its own (per device) environment: compile it as a function.
    fn = CompiledFunction(f"manual_computation@{ctx.index}")
    fn.body = FunctionCompiler(ctx.program, fn).compile_region(op.regions[0])
    shardings = in_sh + out_sh
    mesh = _mesh_of(ctx, shardings[0]) if shardings else None
    ins, outs = ctx.ins(), ctx.outs()
    out_shapes = [ctx.shape(v) for v in ctx.results]
    out_dtypes = [ctx.dtype(v) for v in ctx.results]

    def step(env, rt):
        args = [env[i] for i in ins]
        if mesh is None or not rt.global_view:
            res = fn(args, rt)  # already per-device values: the body sees them as they are
        elif rt.in_manual_body:
            res = _nested_manual(ctx, rt, fn, mesh, args, in_sh, out_sh, out_shapes, out_dtypes,
                                 in_unreduced, out_unreduced)
        else:
            n = mesh.num_devices
            runs = [[DeviceRun(fn, [_manual_part(x, s, u, mesh, d) for x, s, u in zip(args, in_sh, in_unreduced)])
                     for d in range(n)]]
            stats = rt.collective_stats
            per_dev = run_on_devices(ctx.program, runs, stats=stats, in_manual_body=True)[0]
            res = []
            for k, (shape, s, u, dt) in enumerate(zip(out_shapes, out_sh, out_unreduced, out_dtypes)):
                blocks = {d: per_dev[d][k] for d in range(n)}
                res.append(assemble(shape, s, mesh, _summed(blocks, u, mesh) if u else blocks, dt))
        for s, v in zip(outs, res):
            env[s] = v
    return step


def _manual_part(x, sharding: TensorSharding, unreduced, mesh, device: int):
    """Device `device`'s operand of a manual computation's body in the
    global view: its shard of `x` on the manual axes and, unreduced on
    some, a partial sum there (the whole on the first device of each group
    along them, zeros on the others)."""
    part = np.asarray(x)[shard_slices(np.shape(x), sharding, mesh, device)]
    if unreduced and shard_index(device, mesh, unreduced):
        return np.zeros_like(part)
    return part


def _nested_manual(ctx, rt, fn, mesh, args, in_sh, out_sh, out_shapes, out_dtypes,
                   in_unreduced, out_unreduced) -> list:
    """A manual computation inside another one's body, in an unpartitioned
    run: this device's values are their shards on the outer manual axes
    (the inner computation's global view); the body gets their shards on the
    inner manual axes (partial sums on those they are unreduced on), and
    each result is assembled from the shards of the devices that differ
    only on those axes, after summing those of the devices that differ
    only on its unreduced ones."""
    device = rt.device_id
    res = fn([_manual_part(x, s, u, mesh, device) for x, s, u in zip(args, in_sh, in_unreduced)], rt)
    out = []
    for value, shape, s, u, dt in zip(res, out_shapes, out_sh, out_unreduced, out_dtypes):
        refs = [a for dim in s.dims for a in dim.axes]
        if not refs and not u:   # replicated on the inner axes: every device holds the whole value
            out.append(value)
            continue
        group = tuple(group_of(device, device_groups(refs + list(u), mesh)))
        got = rt.comm.exchange(rt, group, ctx.op.name, np.asarray(value), nbytes_of([value]))
        blocks = {d: got[d] for d in group}
        out.append(assemble(shape, s, mesh, _summed(blocks, u, mesh) if u else blocks, dt))
    return out


def _summed(blocks: dict, axes, mesh) -> dict:
    """Partial sums over `axes` made whole: each device's block (device id
    -> array) added to those of the devices in `blocks` that differ from it
    only on `axes`, in their order along them (booleans or-ed, as np.add
    does)."""
    out = {}
    for group in device_groups(list(axes), mesh):
        members = [d for d in group if d in blocks]
        if not members:
            continue
        total = np.asarray(blocks[members[0]])
        with np.errstate(all="ignore"):   # (overflow: a value here, as in the runs)
            for d in members[1:]:
                total = np.add(total, blocks[d])
        for d in members:
            out[d] = total
    return out
