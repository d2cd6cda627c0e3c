"""Point-to-point transfers: stablehlo.send / recv between devices (and to
the host), and `custom_call @sdylog.trace`, a side effect whose runs the
MPMD simulator records in order (tests of cross-device effect ordering)."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import format_location
from sdylog.simulate.ops.control import TOKEN
from sdylog.simulate.registry import custom_call_target, lowering

DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE = 1, 2, 3


def channel_of(ctx) -> tuple[int, int]:
    """(handle, type) of the op's channel_handle."""
    from jaxlib.mlir.dialects import stablehlo as shlo
    a = ctx.attr("channel_handle")
    if a is None:
        raise ctx.error(f"'{ctx.op.name}' without a channel_handle")
    h = shlo.ChannelHandle(a)
    return h.handle, h.channel_type


def peer_of(ctx, device_role: int) -> dict:
    """source_target_pairs as {source: target} (device_role 0) or {target: source} (1)."""
    a = ctx.attr("source_target_pairs")
    if a is None:
        return {}
    pairs = np.array(a).reshape(-1, 2)
    return {int(p[device_role]): int(p[1 - device_role]) for p in pairs}


def _site(ctx, handle: int, peers: dict):
    from sdylog.simulate.p2p import Site
    where = format_location(ctx.op, ctx.filename) or ""
    return lambda d: Site(ctx.op.name, where, handle, peers.get(d))


def _comm(ctx, rt):
    comm = rt.comm
    if comm is None or not hasattr(comm, "send"):
        raise ctx.fail_at_run(f"'{ctx.op.name}' needs devices joined by channels (sdylog simulate on an MPMD "
                              "program)")
    return comm


@lowering("stablehlo.send")
def lower_send(ctx):
    handle, kind = channel_of(ctx)
    ins, out = ctx.ins(), ctx.out_slot()
    site = _site(ctx, handle, peer_of(ctx, 0))
    to_host = kind == DEVICE_TO_HOST or ctx.bool_attr("is_host_transfer")

    def step(env, rt):
        values = [env[i] for i in ins[:-1]]
        if to_host:
            if rt.comm is not None and hasattr(rt.comm, "host_send"):
                rt.comm.host_send(rt, handle, values)
        else:
            _comm(ctx, rt).send(rt, site(rt.device_id), values)
        env[out] = TOKEN
    return step


@lowering("stablehlo.recv")
def lower_recv(ctx):
    from sdylog.simulate.p2p import zeros_like_type
    handle, kind = channel_of(ctx)
    outs = ctx.outs()
    types = [r.type for r in ctx.results[:-1]]
    site = _site(ctx, handle, peer_of(ctx, 1))
    from_host = kind == HOST_TO_DEVICE or ctx.bool_attr("is_host_transfer")

    def step(env, rt):
        if from_host:   # the host answers with zeros
            values = [zeros_like_type(t) for t in types]
        else:
            values = _comm(ctx, rt).recv(rt, site(rt.device_id))
        for s, v in zip(outs, list(values) + [TOKEN]):
            env[s] = v
    return step


@custom_call_target("sdylog.trace")
def lower_trace(ctx):
    """Records (device, "effect", label) where a trace is kept; each result is
    the operand at its position when types match, a token, or zeros."""
    from sdylog.simulate.p2p import zeros_like_type
    label = ir.StringAttr(ctx.attr("backend_config")).value if ctx.attr("backend_config") is not None else ""
    ins, outs = ctx.ins(), ctx.outs()
    sources = []
    for i, r in enumerate(ctx.results):
        if str(r.type) == "!stablehlo.token":
            sources.append(("token", None))
        elif i < len(ctx.operands) and ctx.operands[i].type == r.type:
            sources.append(("operand", ins[i]))
        else:
            sources.append(("zeros", zeros_like_type(r.type)))

    def step(env, rt):
        if rt.comm is not None and hasattr(rt.comm, "record"):
            rt.comm.record(rt, "effect", label)
        for s, (how, x) in zip(outs, sources):
            env[s] = TOKEN if how == "token" else env[x] if how == "operand" else x
    return step
