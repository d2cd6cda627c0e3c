"""Element-wise ops: numpy ufuncs chosen at compile time for the element types.

Narrow floats (bf16, f16, f8*) compute in f32 and round once to the result
type, as XLA does. Integer division and remainder follow StableHLO (truncate
toward zero; x/0 = -1, x%0 = x), shifts past the bit width give 0 (or the
sign for arithmetic shifts), and `compare` supports TOTALORDER (integers compare by their element
type's signedness, whatever `compare_type` says, as the reference does).
"""
from __future__ import annotations

import numpy as np
from sdylog.simulate.dtypes import (NARROW_FLOATS, bit_width, compute_dtype, is_bool, is_complex,
                                    is_float, is_integer, is_unsigned, uint_of_width)
from sdylog.simulate.registry import lowering



# --- building blocks ------------------------------------------------------------------

def _quiet(fn):
    def run(*xs):
        with np.errstate(all="ignore"):
            return fn(*xs)
    return run


def _logistic(x):
    # 1 / (1 + exp(-x)), written to stay finite for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype if hasattr(x, "dtype") else np.float64)


def _round_afz_exact(x):
    # floor(|x| + 0.5) is off for 0.49999997 in f32; use trunc with an explicit half test.
    t = np.trunc(x)
    frac = np.abs(x - t)
    return np.where(frac >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _sign(x):
    if is_complex(x.dtype):
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    return np.sign(x)


def _int_div(signed: bool, dtype):
    def div(a, b):
        with np.errstate(all="ignore"):
            zero = b == 0
            bs = np.where(zero, 1, b).astype(dtype)
            if signed:
                lo = np.iinfo(dtype).min
                ovf = (a == lo) & (bs == -1)
                bs = np.where(ovf, 1, bs).astype(dtype)
                q = a // bs
                r = a - q * bs
                q = q + ((r != 0) & ((a < 0) != (bs < 0)))
                q = np.where(ovf, a, q)
                return np.where(zero, np.array(-1, dtype), q).astype(dtype)
            q = a // bs
            return np.where(zero, np.array(np.iinfo(dtype).max, dtype), q).astype(dtype)
    return div


def _int_rem(signed: bool, dtype):
    def rem(a, b):
        with np.errstate(all="ignore"):
            zero = b == 0
            bs = np.where(zero, 1, b).astype(dtype)
            if signed:
                lo = np.iinfo(dtype).min
                bs = np.where((a == lo) & (bs == -1), 1, bs).astype(dtype)
            r = np.fmod(a, bs)
            return np.where(zero, a, r).astype(dtype)
    return rem


def _int_pow(dtype):
    def pw(a, b):
        with np.errstate(all="ignore"):
            neg = b < 0
            r = np.power(a, np.where(neg, 0, b).astype(b.dtype if hasattr(b, "dtype") else dtype))
            if not is_unsigned(dtype):
                r_neg = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
                r = np.where(neg, r_neg, r)
            return np.asarray(r).astype(dtype)
    return pw


def _shift(kind: str, dtype):
    width = bit_width(dtype)
    udt = uint_of_width(max(8, np.dtype(dtype).itemsize * 8))
    sdt = np.dtype(f"i{udt.itemsize}")

    def shift(a, b):
        with np.errstate(all="ignore"):
            bu = np.asarray(b).astype(sdt).view(udt) if not is_unsigned(dtype) else np.asarray(b).astype(udt)
            big = bu >= width
            amount = np.where(big, 0, bu).astype(udt)
            if kind == "left":
                r = np.left_shift(np.asarray(a).view(udt) if np.asarray(a).dtype != udt else a, amount)
                r = np.where(big, 0, r).astype(udt)
                return r.view(dtype) if r.dtype != dtype else r
            if kind == "logical":
                r = np.right_shift(np.asarray(a).astype(dtype).view(udt), amount)
                r = np.where(big, 0, r).astype(udt)
                return r.view(dtype) if r.dtype != dtype else r
            s = np.asarray(a).astype(dtype).view(sdt)
            r = np.right_shift(s, np.where(big, width - 1, amount).astype(sdt))
            return r.view(dtype) if r.dtype != dtype else r
    return shift


def _clz(dtype):
    width = bit_width(dtype)
    udt = uint_of_width(max(8, np.dtype(dtype).itemsize * 8))

    def clz(x):
        u = np.asarray(x).view(udt) if np.asarray(x).dtype != udt else np.asarray(x)
        n = np.zeros(u.shape, dtype=np.int64)
        v = u.copy()
        s = width // 2
        while s >= 1:
            hi = (v >> np.array(s, udt)) != 0
            n = n + np.where(hi, s, 0)
            v = np.where(hi, v >> np.array(s, udt), v)
            s //= 2
        bits = n + (v != 0)
        return (width - bits).astype(dtype)
    return clz


def _popcnt(dtype):
    udt = uint_of_width(max(8, np.dtype(dtype).itemsize * 8))

    def pc(x):
        # numpy counts the bits of |x|; StableHLO counts the two's complement bits
        x = np.asarray(x)
        return np.bitwise_count(x.view(udt) if x.dtype != udt else x).astype(dtype)
    return pc


def total_order_key(x):
    """Integers ordered like IEEE totalOrder on the floats `x` (-NaN < -inf < ... < NaN)."""
    x = np.asarray(x)
    if x.dtype in NARROW_FLOATS:
        x = x.astype(np.float32)
    sdt = np.dtype(f"i{x.dtype.itemsize}")
    i = x.view(sdt)
    return np.where(i < 0, i ^ np.array(np.iinfo(sdt).max, sdt), i)


_CMP = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
        "LE": np.less_equal, "LT": np.less}


def comparator(direction: str, compare_type: str | None, dtype):
    """fn(a, b) -> bool array for `stablehlo.compare`."""
    cmp = _CMP[direction]
    if compare_type == "TOTALORDER" and is_float(dtype):
        return lambda a, b: cmp(total_order_key(a), total_order_key(b))
    if is_complex(dtype) and direction not in ("EQ", "NE"):
        def lex(a, b):
            ar, br = np.real(a), np.real(b)
            eq = ar == br
            return np.where(eq, cmp(np.imag(a), np.imag(b)), cmp(ar, br))
        return lex
    if dtype in NARROW_FLOATS:
        return lambda a, b: cmp(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32))
    return cmp


def convert_array(x, out_dtype):
    """`stablehlo.convert`: float->int saturates (NaN -> 0), complex->real keeps the real part."""
    x = np.asarray(x)
    src = x.dtype
    if src == out_dtype:
        return x
    if is_bool(out_dtype):
        return x != 0
    if is_complex(src) and not is_complex(out_dtype):
        x = np.real(x)
        src = x.dtype
    if is_float(src) and is_integer(out_dtype):
        lo, hi = _int_limits(out_dtype)
        with np.errstate(all="ignore"):
            f = np.asarray(x, dtype=np.float64)
            f = np.where(np.isnan(f), 0, np.clip(np.trunc(f), lo, hi))
            if np.dtype(out_dtype).itemsize == 8:
                # float64 cannot hold the int64 limits exactly: fix the ends.
                r = f.astype(out_dtype)
                r = np.where(f >= float(hi), np.array(hi, dtype=out_dtype), r)
                return np.where(f <= float(lo), np.array(lo, dtype=out_dtype), r).astype(out_dtype)
            return f.astype(out_dtype)
    with np.errstate(all="ignore"):
        if is_integer(src) and is_integer(out_dtype) and (src.kind == "V" or np.dtype(out_dtype).kind == "V"):
            return x.astype(np.int64).astype(out_dtype)
        return x.astype(out_dtype)


def _int_limits(dtype):
    import ml_dtypes
    info = ml_dtypes.iinfo(dtype)
    return int(info.min), int(info.max)


def reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    x = np.asarray(x)
    orig = x.dtype
    if orig in NARROW_FLOATS:
        x = x.astype(np.float32)
    src_m = np.finfo(x.dtype).nmant
    src_e = np.dtype(x.dtype).itemsize * 8 - 1 - src_m
    udt = uint_of_width(x.dtype.itemsize * 8)
    bits = x.view(udt).copy()
    one = udt.type(1)
    with np.errstate(all="ignore"):
        if mantissa_bits < src_m:
            last = one << udt.type(src_m - mantissa_bits)
            base_bias = (last >> one) - one
            last_bit = (bits & last) >> udt.type(src_m - mantissa_bits)
            bits = (bits + last_bit + base_bias) & ~(last - one)
        if exponent_bits < src_e:
            nbits = x.dtype.itemsize * 8
            sign_mask = one << udt.type(nbits - 1)
            exp_mask = ((one << udt.type(src_e)) - one) << udt.type(src_m)
            bias = (1 << (src_e - 1)) - 1
            red_bias = (1 << (exponent_bits - 1)) - 1
            max_e = udt.type(bias + red_bias) << udt.type(src_m)
            min_e = udt.type(bias - red_bias) << udt.type(src_m)
            e = bits & exp_mask
            signed_zero = bits & sign_mask
            signed_inf = signed_zero | exp_mask
            bits = np.where(e > max_e, signed_inf, np.where(e <= min_e, signed_zero, bits)).astype(udt)
    r = bits.view(x.dtype)
    nan = np.isnan(x)
    if mantissa_bits > 0:
        r = np.where(nan, x, r)
    else:
        r = np.where(nan, np.copysign(np.inf, x).astype(x.dtype), r)
    return r.astype(orig)


def _max(dtype):
    if is_bool(dtype):
        return np.logical_or
    if is_complex(dtype):
        return lambda a, b: np.where((np.real(a) > np.real(b)) | ((np.real(a) == np.real(b)) & (np.imag(a) >= np.imag(b))), a, b)
    return np.maximum


def _min(dtype):
    if is_bool(dtype):
        return np.logical_and
    if is_complex(dtype):
        return lambda a, b: np.where((np.real(a) < np.real(b)) | ((np.real(a) == np.real(b)) & (np.imag(a) <= np.imag(b))), a, b)
    return np.minimum


# --- the table: op -> (dtype of operand 0, result dtype, op) -> (fn, in-place ufunc or None) ----

def _binary_table(name, dt, out):
    if name == "add":
        return (np.logical_or, None) if is_bool(dt) else (np.add, np.add)
    if name == "subtract":
        return (np.subtract, np.subtract)
    if name == "multiply":
        return (np.logical_and, None) if is_bool(dt) else (np.multiply, np.multiply)
    if name == "divide":
        if is_integer(dt):
            return _int_div(not is_unsigned(dt), dt), None
        return _quiet(np.divide), np.divide
    if name == "remainder":
        if is_integer(dt):
            return _int_rem(not is_unsigned(dt), dt), None
        return _quiet(np.fmod), None
    if name == "power":
        if is_integer(dt):
            return _int_pow(dt), None
        return _quiet(np.power), None
    if name == "maximum":
        f = _max(dt)
        return f, (f if f is np.maximum else None)
    if name == "minimum":
        f = _min(dt)
        return f, (f if f is np.minimum else None)
    if name == "and":
        return (np.logical_and, None) if is_bool(dt) else (np.bitwise_and, np.bitwise_and)
    if name == "or":
        return (np.logical_or, None) if is_bool(dt) else (np.bitwise_or, np.bitwise_or)
    if name == "xor":
        return (np.logical_xor, None) if is_bool(dt) else (np.bitwise_xor, np.bitwise_xor)
    if name == "atan2":
        return _quiet(np.arctan2), None
    if name == "shift_left":
        return _shift("left", dt), None
    if name == "shift_right_logical":
        return _shift("logical", dt), None
    if name == "shift_right_arithmetic":
        return _shift("arithmetic", dt), None
    if name == "complex":
        return (lambda a, b: (a + 1j * b).astype(out)), None
    raise KeyError(name)


def _unary_table(name, dt, out):
    if name == "negate":
        return np.negative, np.negative
    if name == "abs":
        return np.abs, (np.abs if not is_complex(dt) else None)
    if name == "not":
        return (np.logical_not, None) if is_bool(dt) else (np.invert, np.invert)
    if name == "sign":
        return (_sign, None) if is_complex(dt) or is_float(dt) else (np.sign, None)
    if name == "popcnt":
        return _popcnt(dt), None
    if name == "count_leading_zeros":
        return _clz(dt), None
    if name == "real":  # np.real returns a float operand itself: copy, results own their buffer
        return (lambda x: np.array(np.real(x))), None
    if name == "imag":
        return (lambda x: np.array(np.imag(x))), None
    if name == "is_finite":
        return np.isfinite, None
    if name == "round_nearest_afz":
        return _round_afz_exact, None
    if name == "logistic":
        return _quiet(_logistic), None
    if name == "rsqrt":
        return _quiet(lambda x: 1 / np.sqrt(x)), None
    fn = {"exponential": np.exp, "exponential_minus_one": np.expm1, "log": np.log,
          "log_plus_one": np.log1p, "sqrt": np.sqrt, "cbrt": np.cbrt, "sine": np.sin,
          "cosine": np.cos, "tan": np.tan, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
          "round_nearest_even": np.rint}[name]
    return _quiet(fn), (fn if not is_complex(dt) else None)


_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum",
           "and", "or", "xor", "atan2", "shift_left", "shift_right_logical", "shift_right_arithmetic",
           "complex"]
_UNARY = ["negate", "abs", "not", "sign", "popcnt", "count_leading_zeros", "real", "imag",
          "is_finite", "round_nearest_afz", "round_nearest_even", "logistic", "rsqrt", "exponential",
          "exponential_minus_one", "log", "log_plus_one", "sqrt", "cbrt", "sine", "cosine", "tan",
          "tanh", "floor", "ceil"]


def elementwise_fn(op_name: str, in_dtype, out_dtype):
    """(fn, in-place ufunc or None) computing `op_name` on arrays of `in_dtype`."""
    short = op_name.split(".", 1)[1]
    cdt = compute_dtype(in_dtype)
    table = _binary_table if short in _BINARY else _unary_table
    fn, uf = table(short, cdt, out_dtype)
    if cdt != in_dtype or out_dtype in NARROW_FLOATS:
        return _narrow_or_small(fn, cdt, out_dtype), None
    return fn, uf


def _narrow_or_small(fn, cdt, out_dtype):
    def run(*xs):
        ys = [np.asarray(x).astype(cdt) if np.asarray(x).dtype != cdt and np.asarray(x).dtype != np.bool_ else x
              for x in xs]
        with np.errstate(all="ignore"):
            return np.asarray(fn(*ys)).astype(out_dtype)
    return run


def _reusable(a, shape, dtype) -> bool:
    return a.__class__ is np.ndarray and a.shape == shape and a.dtype == dtype and a.flags.writeable


@lowering(*(f"stablehlo.{n}" for n in _UNARY + _BINARY), alias="fresh")
def lower_elementwise(ctx):
    in_dtype = ctx.dtype(ctx.operands[0])
    out_dtype = ctx.result_dtype
    fn, uf = elementwise_fn(ctx.op.name, in_dtype, out_dtype)
    ins, o = ctx.ins(), ctx.out_slot()
    rshape = ctx.result_shape
    reuse = [i for i in range(len(ins)) if uf is not None and rshape and ctx.can_overwrite(i)
             and ctx.shape(ctx.operands[i]) == rshape and ctx.dtype(ctx.operands[i]) == out_dtype]
    exact = _exact_type(fn, out_dtype, rshape)
    if len(ins) == 1:
        (a,) = ins
        if reuse:
            def step(env, rt):
                x = env[a]
                env[o] = uf(x, out=x) if _reusable(x, rshape, out_dtype) else exact(x)
        else:
            def step(env, rt):
                env[o] = exact(env[a])
        return step
    a, b = ins
    if reuse:
        r = reuse[0]

        def step(env, rt):
            x, y = env[a], env[b]
            buf = x if r == 0 else y
            if _reusable(buf, rshape, out_dtype):
                with np.errstate(all="ignore"):
                    env[o] = uf(x, y, out=buf)
            else:
                env[o] = exact(x, y)
    else:
        def step(env, rt):
            env[o] = exact(env[a], env[b])
    return step


def _exact_type(fn, out_dtype, shape):
    """Guard against numpy's scalar/dtype promotion: results keep the declared element type."""
    def run(*xs):
        with np.errstate(all="ignore"):
            r = fn(*xs)
        if r.__class__ is not np.ndarray or r.dtype != out_dtype:
            r = np.asarray(r)
            if r.dtype != out_dtype:
                r = r.astype(out_dtype)
        return r
    return run


@lowering("stablehlo.compare", alias="fresh")
def lower_compare(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    direction = shlo.ComparisonDirectionAttr(ctx.attr("comparison_direction")).value
    ct = ctx.attr("compare_type")
    compare_type = shlo.ComparisonTypeAttr(ct).value if ct is not None else None
    fn = comparator(direction, compare_type, ctx.dtype(ctx.operands[0]))
    a, b = ctx.ins()
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = np.asarray(fn(env[a], env[b]))
    return step


@lowering("stablehlo.select", alias="fresh")
def lower_select(ctx):
    p, a, b = ctx.ins()
    o = ctx.out_slot()
    out_dtype = ctx.result_dtype

    def step(env, rt):
        r = np.where(env[p], env[a], env[b])
        env[o] = r if r.dtype == out_dtype else r.astype(out_dtype)
    return step


@lowering("stablehlo.clamp", alias="fresh")
def lower_clamp(ctx):
    lo, x, hi = ctx.ins()
    o = ctx.out_slot()
    dt = ctx.result_dtype
    cdt = compute_dtype(dt)
    mx, mn = _max(cdt), _min(cdt)
    shape = ctx.result_shape

    def step(env, rt):
        vals = [np.asarray(env[i]) for i in (lo, x, hi)]
        if cdt != dt:
            vals = [v.astype(cdt) for v in vals]
        r = mn(mx(vals[1], vals[0]), vals[2])
        r = np.broadcast_to(r, shape) if np.shape(r) != shape and np.ndim(vals[1]) == len(shape) else r
        env[o] = np.asarray(r).astype(dt) if np.asarray(r).dtype != dt else np.asarray(r)
    return step


@lowering("stablehlo.convert", alias="view")
def lower_convert(ctx):
    a, o = ctx.in_slot(), ctx.out_slot()
    out = ctx.result_dtype

    def step(env, rt):
        env[o] = convert_array(env[a], out)
    return step


@lowering("stablehlo.bitcast_convert", alias="view")
def lower_bitcast(ctx):
    a, o = ctx.in_slot(), ctx.out_slot()
    out = ctx.result_dtype
    shape = ctx.result_shape

    def step(env, rt):
        x = np.ascontiguousarray(env[a])
        env[o] = x.view(out).reshape(shape)
    return step


@lowering("stablehlo.reduce_precision", alias="fresh")
def lower_reduce_precision(ctx):
    a, o = ctx.in_slot(), ctx.out_slot()
    e, m = ctx.int_attr("exponent_bits"), ctx.int_attr("mantissa_bits")

    def step(env, rt):
        env[o] = reduce_precision(env[a], e, m)
    return step


ELEMENTWISE_OPS = frozenset([f"stablehlo.{n}" for n in _UNARY + _BINARY] +
                            ["stablehlo.compare", "stablehlo.select", "stablehlo.clamp",
                             "stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.reduce_precision"])
