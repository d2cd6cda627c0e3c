"""Control flow and calls: while, case, if, func.call, composite, optimization_barrier, tuples."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from sdylog.simulate.registry import lowering


def _truth(x) -> bool:
    return bool(np.asarray(x).reshape(-1)[0])


@lowering("stablehlo.while")
def lower_while(ctx):
    cond = ctx.region(0)
    body = ctx.region(1)
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        vals = [env[i] for i in ins]
        while _truth(cond.run(env, rt, vals)[0]):
            vals = body.run(env, rt, vals)
        for s, v in zip(outs, vals):
            env[s] = v
    return step


@lowering("stablehlo.case")
def lower_case(ctx):
    branches = [ctx.region(i) for i in range(len(ctx.op.regions))]
    idx = ctx.in_slot(0)
    outs = ctx.outs()

    def step(env, rt):
        i = int(np.asarray(env[idx]).reshape(-1)[0])
        if not 0 <= i < len(branches):
            i = len(branches) - 1
        for s, v in zip(outs, branches[i].run(env, rt, [])):
            env[s] = v
    return step


@lowering("stablehlo.if")
def lower_if(ctx):
    then, other = ctx.region(0), ctx.region(1)
    p = ctx.in_slot(0)
    outs = ctx.outs()

    def step(env, rt):
        branch = then if _truth(env[p]) else other
        for s, v in zip(outs, branch.run(env, rt, [])):
            env[s] = v
    return step


def _call_step(ctx, name: str):
    fn = ctx.program.function(name, at=ctx.op)
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        res = fn.call([env[i] for i in ins], rt)
        for s, v in zip(outs, res):
            env[s] = v
    return step


@lowering("func.call")
def lower_call(ctx):
    return _call_step(ctx, ir.FlatSymbolRefAttr(ctx.attr("callee")).value)


@lowering("stablehlo.composite")
def lower_composite(ctx):
    return _call_step(ctx, ir.FlatSymbolRefAttr(ctx.attr("decomposition")).value)


@lowering("stablehlo.optimization_barrier")
def lower_identity_many(ctx):
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        for s, i in zip(outs, ins):
            env[s] = env[i]
    return step


@lowering("stablehlo.tuple")
def lower_tuple(ctx):
    ins, o = ctx.ins(), ctx.out_slot()

    def step(env, rt):
        env[o] = tuple(env[i] for i in ins)
    return step


@lowering("stablehlo.get_tuple_element")
def lower_get_tuple_element(ctx):
    k = ctx.int_attr("index")
    a, o = ctx.in_slot(), ctx.out_slot()

    def step(env, rt):
        env[o] = env[a][k]
    return step


class Token:
    """The value of a `!stablehlo.token`."""
    __slots__ = ()

    def __repr__(self):
        return "token"


TOKEN = Token()


@lowering("stablehlo.after_all", "stablehlo.create_token")
def lower_token(ctx):
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = TOKEN
    return step
