"""Constants and custom calls with a defined meaning."""
from __future__ import annotations

from jaxlib.mlir import ir

from sdylog.simulate.constants import elements_from_op
from sdylog.simulate.registry import custom_call_lowering, lowering


@lowering("stablehlo.constant")
def lower_constant(ctx):
    value = elements_from_op(ctx.op)
    value.flags.writeable = False  # shared by every run: never written in place
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = value
    return step


# custom_call targets that only carry annotations: the value passes through.
_PASS_THROUGH = {"Sharding", "annotate_device_placement", "MoveToHost", "MoveToDevice",
                 "LayoutConstraint", "X64Combine", "xla.sdy.FuncResultSharding",
                 "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape"}


@lowering("stablehlo.custom_call")
def lower_custom_call(ctx):
    target = ir.StringAttr(ctx.attr("call_target_name")).value
    if target.startswith("check."):
        from sdylog.simulate.ops.testing import custom_call_check
        return custom_call_check(ctx, target)
    ins, outs = ctx.ins(), ctx.outs()
    if target in _PASS_THROUGH or target in ("SPMDFullToShardShape", "SPMDShardToFullShape"):
        if len(ins) != len(outs) or any(ctx.shape(a) != ctx.shape(b) or ctx.dtype(a) != ctx.dtype(b)
                                        for a, b in zip(ctx.operands, ctx.results)):
            raise ctx.error(f"custom_call @{target} changes its operand's type; the simulator only "
                            "passes such annotations through")

        def step(env, rt):
            for s, i in zip(outs, ins):
                env[s] = env[i]
        return step
    other = custom_call_lowering(target)
    if other is not None:
        return other(ctx)
    raise ctx.error(f"the simulator cannot execute custom_call @{target}")

