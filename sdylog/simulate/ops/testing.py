"""The StableHLO interpreter's test ops: `interpreter.run_parallel` and the
`check.*` assertions (also as `stablehlo.custom_call @check.*`).

jaxlib has neither dialect: modules holding them are parsed with unregistered
dialects allowed, and these ops arrive in generic form.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from sdylog.simulate.constants import elements_to_array
from sdylog.simulate.dtypes import is_complex, is_float
from sdylog.simulate.mesh import DeviceRun, run_on_devices
from sdylog.simulate.registry import lowering


def _show(x) -> str:
    return np.array2string(np.asarray(x), threshold=64, max_line_width=120)


def expect_eq(a, b) -> str | None:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    if is_float(a.dtype) or is_complex(a.dtype):
        fa = a.astype(np.complex128 if is_complex(a.dtype) else np.float64)
        fb = b.astype(fa.dtype)
        same = (fa == fb) | (np.isnan(fa) & np.isnan(fb))
    else:
        same = a == b
    if np.all(same):
        return None
    return f"values differ:\n{_show(a)}\n!=\n{_show(b)}"


def expect_almost_eq(a, b, tolerance: float) -> str | None:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    ca = a.astype(np.complex128) if is_complex(a.dtype) else a.astype(np.float64)
    cb = b.astype(ca.dtype)
    close = (np.abs(ca - cb) <= tolerance) | (ca == cb) | (np.isnan(ca) & np.isnan(cb))
    if np.all(close):
        return None
    return f"values differ by more than {tolerance}:\n{_show(a)}\n!=\n{_show(b)}"


def ulp_distance(a, b) -> np.ndarray:
    from sdylog.simulate.ops.elementwise import total_order_key
    ka = total_order_key(a).astype(np.int64)
    kb = total_order_key(b).astype(np.int64)
    # total_order_key maps -0.0 next to +0.0 (distance 1); count them as equal.
    zero = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    return np.where(zero, 0, np.abs(ka - kb))


def expect_close(a, b, min_ulp: int, max_ulp: int) -> str | None:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    if not is_float(a.dtype):
        return expect_eq(a, b)
    d = ulp_distance(a, b)
    both_nan = np.isnan(np.asarray(a, np.float64)) & np.isnan(np.asarray(b, np.float64))
    ok = both_nan | ((d >= min_ulp) & (d <= max_ulp))
    if np.all(ok):
        return None
    return f"values differ by more than {max_ulp} ULP:\n{_show(a)}\n!=\n{_show(b)}"


def _float_attr(ctx, name, default):
    a = ctx.attr(name)
    if a is None:
        return default
    try:
        return ir.FloatAttr(a).value
    except (TypeError, ValueError):
        return float(ir.IntegerAttr(a).value)


def _check_step(ctx, kind: str):
    ins = ctx.ins()
    const = None
    if kind.endswith("_const"):
        const = elements_to_array(ctx.attr("value"))
    tol = _float_attr(ctx, "tolerance", 1e-4)
    min_ulp = ctx.int_attr("min_ulp_difference", 0)
    max_ulp = ctx.int_attr("max_ulp_difference", 3)
    base = kind.removesuffix("_const")

    def compare(a, b):
        if base == "expect_eq":
            return expect_eq(a, b)
        if base == "expect_almost_eq":
            return expect_almost_eq(a, b, tol)
        if base == "expect_close":
            return expect_close(a, b, min_ulp, max_ulp)
        raise ctx.fail_at_run(f"check.{kind} is not supported")

    def step(env, rt):
        a = env[ins[0]]
        b = const if const is not None else env[ins[1]]
        why = compare(a, b)
        if why is not None:
            raise ctx.fail_at_run(f"check.{kind} failed: {why}")
    return step


@lowering("check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq",
          "check.expect_almost_eq_const", "check.expect_close", "check.expect_serialized_eq")
def lower_check(ctx):
    return _check_step(ctx, ctx.op.name.split(".", 1)[1])


def custom_call_check(ctx, target: str):
    """`stablehlo.custom_call @check.expect_close(a, b)` and `@check.eq(a, b) -> i1`."""
    kind = target.split(".", 1)[1]
    if kind == "eq":
        a, b = ctx.ins()
        o = ctx.out_slot()

        def step(env, rt):
            env[o] = np.asarray(expect_eq(env[a], env[b]) is None)
        return step
    return _check_step(ctx, kind)


@lowering("interpreter.run_parallel")
def lower_run_parallel(ctx):
    programs = [[ir.FlatSymbolRefAttr(x).value for x in ir.ArrayAttr(row)]
                for row in ir.ArrayAttr(ctx.attr("programs"))]
    fns = [[ctx.program.function(name, at=ctx.op) for name in row] for row in programs]
    n_args = [[len(f.arg_types) for f in row] for row in fns]
    n_res = [[len(f.result_types) for f in row] for row in fns]
    total_args = sum(map(sum, n_args))
    if total_args != len(ctx.operands):
        raise ctx.error(f"the programs take {total_args} arguments, the op has {len(ctx.operands)} operands")
    if sum(map(sum, n_res)) != len(ctx.results):
        raise ctx.error("the programs' results do not match the op's results")
    ins, outs = ctx.ins(), ctx.outs()

    def step(env, rt):
        args = [env[i] for i in ins]
        runs, k = [], 0
        for row, counts in zip(programs, n_args):
            runs.append([])
            for name, c in zip(row, counts):
                runs[-1].append(DeviceRun(name, args[k:k + c]))
                k += c
        results = run_on_devices(ctx.program, runs, stats=rt.collective_stats)
        flat = [v for row in results for dev in row for v in dev]
        for s, v in zip(outs, flat):
            env[s] = v
    return step


@lowering("interpreter.print", "interpreter.probe")
def lower_print(ctx):
    ins = ctx.ins()
    outs = ctx.outs()

    def step(env, rt):
        for i in ins:
            print(np.asarray(env[i]))
        for s, i in zip(outs, ins):
            env[s] = env[i]
    return step
