"""Op semantics against the StableHLO reference interpreter, on small random inputs."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from simulate_oracle import check

_DT = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i8": np.int8,
       "ui32": np.uint32, "ui8": np.uint8, "i1": np.bool_, "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def gen(spec: str, rng, kind: str = "normal"):
    *dims, et = spec.split("x")
    shape = tuple(int(d) for d in dims)
    dt = _DT[et]
    if et == "i1":
        return rng.random(shape) < 0.5
    if et.startswith(("i", "ui")):
        lo, hi = {"small": (-4, 5), "nonzero": (-4, 5), "index": (-2, 8), "shift": (0, 40), "nonneg": (0, 6)}.get(
            kind, (-20, 21))
        if et.startswith("ui"):
            lo = max(lo, 0)
        x = rng.integers(lo, hi, size=shape)
        if kind == "nonzero":  # the reference interpreter traps on integer division by zero
            x = np.where(x == 0, 3, x)
        return x.astype(dt)
    x = rng.standard_normal(shape) * (3 if kind == "wide" else 1)
    if kind == "positive":
        x = np.abs(x) + 0.1
    if kind == "unit":
        x = np.tanh(x) * 0.9
    return x.astype(np.float32).astype(dt)


def t(spec: str) -> str:
    return f"tensor<{spec}>"


def case(name, args, results, body, kinds=None, tol=(1e-5, 1e-6)):
    """args: [(spec)], results: [spec]; body uses %a0, %a1, ... and returns %r."""
    params = ", ".join(f"%a{i}: {t(s)}" for i, s in enumerate(args))
    text = (f"func.func @main({params}) -> ({', '.join(t(r) for r in results)}) {{\n{body}\n}}")
    return pytest.param(text, args, kinds or ["normal"] * len(args), tol, id=name)


def unary(op, spec="4x5xf32", kind="normal", out=None, tol=(1e-5, 1e-6)):
    out = out or spec
    return case(f"{op}-{spec}", [spec], [out],
                f"  %r = stablehlo.{op} %a0 : ({t(spec)}) -> {t(out)}\n  return %r : {t(out)}", [kind], tol)


def binary(op, spec="4x5xf32", kinds=("normal", "normal"), out=None, tol=(1e-5, 1e-6)):
    out = out or spec
    return case(f"{op}-{spec}", [spec, spec], [out],
                f"  %r = stablehlo.{op} %a0, %a1 : ({t(spec)}, {t(spec)}) -> {t(out)}\n  return %r : {t(out)}",
                list(kinds), tol)


ELEMENTWISE = [
    *(unary(op) for op in ["abs", "negate", "exponential", "exponential_minus_one", "sine", "cosine",
                           "tanh", "logistic", "floor", "ceil", "round_nearest_afz",
                           "round_nearest_even", "sign", "cbrt"]),
    unary("tan", kind="unit"),
    *(unary(op, kind="positive") for op in ["log", "log_plus_one", "sqrt", "rsqrt"]),
    unary("is_finite", out="4x5xi1"),
    unary("abs", "6xi32"), unary("negate", "6xi32"), unary("sign", "6xi32"), unary("not", "6xi32"),
    unary("not", "6xi1"), unary("popcnt", "6xi32"), unary("count_leading_zeros", "6xi32"),
    unary("count_leading_zeros", "6xui8"),
    *(binary(op) for op in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2"]),
    binary("remainder", kinds=("wide", "normal")),
    binary("power", kinds=("positive", "normal")),
    *(binary(op, "3x4xi32") for op in ["add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor"]),
    binary("divide", "3x4xi32", kinds=("normal", "nonzero")),
    binary("remainder", "3x4xi32", kinds=("normal", "nonzero")),
    binary("divide", "3x4xui32", kinds=("normal", "nonzero")),
    binary("power", "3x4xi32", kinds=("small", "small")),
    binary("shift_left", "3x4xi32", kinds=("normal", "shift")),
    binary("shift_right_logical", "3x4xi32", kinds=("normal", "shift")),
    binary("shift_right_arithmetic", "3x4xi32", kinds=("normal", "shift")),
    binary("add", "3x4xi1"), binary("multiply", "3x4xi1"), binary("and", "3x4xi1"), binary("xor", "3x4xi1"),
    binary("multiply", "3x4xf16", tol=(1e-3, 1e-3)),
    binary("add", "3x4xi8"),
    case("compare-totalorder", ["5xf32", "5xf32"], ["5xi1", "5xi1", "5xi1"], """
  %0 = stablehlo.compare LT, %a0, %a1, TOTALORDER : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %1 = stablehlo.compare GE, %a0, %a1, FLOAT : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %2 = stablehlo.compare NE, %a0, %a0 : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  return %0, %1, %2 : tensor<5xi1>, tensor<5xi1>, tensor<5xi1>"""),
    case("select-clamp", ["3x4xi1", "3x4xf32", "3x4xf32"], ["3x4xf32", "3x4xf32"], """
  %0 = stablehlo.select %a0, %a1, %a2 : tensor<3x4xi1>, tensor<3x4xf32>
  %lo = stablehlo.constant dense<-0.5> : tensor<f32>
  %hi = stablehlo.constant dense<0.5> : tensor<f32>
  %1 = stablehlo.clamp %lo, %a1, %hi : (tensor<f32>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>"""),
    case("convert", ["6xf32"], ["6xi32", "6xi1", "6xf32", "6xui8"], """
  %0 = stablehlo.convert %a0 : (tensor<6xf32>) -> tensor<6xi32>
  %1 = stablehlo.convert %a0 : (tensor<6xf32>) -> tensor<6xi1>
  %2 = stablehlo.convert %a0 : (tensor<6xf32>) -> tensor<6xbf16>
  %3 = stablehlo.convert %2 : (tensor<6xbf16>) -> tensor<6xf32>
  %4 = stablehlo.convert %0 : (tensor<6xi32>) -> tensor<6xui8>
  return %0, %1, %3, %4 : tensor<6xi32>, tensor<6xi1>, tensor<6xf32>, tensor<6xui8>""", ["wide"]),
    case("bf16-math", ["6xf32"], ["6xf32"], """
  %0 = stablehlo.convert %a0 : (tensor<6xf32>) -> tensor<6xbf16>
  %1 = stablehlo.exponential %0 : tensor<6xbf16>
  %2 = stablehlo.multiply %1, %0 : tensor<6xbf16>
  %3 = stablehlo.convert %2 : (tensor<6xbf16>) -> tensor<6xf32>
  return %3 : tensor<6xf32>""", tol=(1e-2, 1e-2)),
    case("bitcast", ["6xf32"], ["6xi32", "6x2xi16"], """
  %0 = stablehlo.bitcast_convert %a0 : (tensor<6xf32>) -> tensor<6xi32>
  %1 = stablehlo.bitcast_convert %a0 : (tensor<6xf32>) -> tensor<6x2xi16>
  return %0, %1 : tensor<6xi32>, tensor<6x2xi16>"""),
    case("reduce_precision", ["8xf32"], ["8xf32"], """
  %0 = stablehlo.reduce_precision %a0, format = e5m2 : tensor<8xf32>
  return %0 : tensor<8xf32>""", ["wide"]),
]

SHAPES = [
    case("broadcast_in_dim", ["3x2xf32"], ["2x4x3xf32"], """
  %0 = stablehlo.broadcast_in_dim %a0, dims = [2, 0] : (tensor<3x2xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>"""),
    case("reshape-transpose", ["2x3x4xf32"], ["4x6xf32", "4x2x3xf32"], """
  %0 = stablehlo.reshape %a0 : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %1 = stablehlo.transpose %a0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x2x3xf32>"""),
    case("slice-reverse-concat", ["5x6xf32", "5x2xf32"], ["2x2xf32", "5x6xf32", "5x8xf32"], """
  %0 = stablehlo.slice %a0 [1:5:2, 0:6:3] : (tensor<5x6xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.reverse %a0, dims = [0, 1] : tensor<5x6xf32>
  %2 = stablehlo.concatenate %a0, %a1, dim = 1 : (tensor<5x6xf32>, tensor<5x2xf32>) -> tensor<5x8xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<5x6xf32>, tensor<5x8xf32>"""),
    case("pad", ["3x4xf32"], ["8x6xf32"], """
  %v = stablehlo.constant dense<7.0> : tensor<f32>
  %0 = stablehlo.pad %a0, %v, low = [1, -1], high = [2, 0], interior = [1, 1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>"""),
    case("iota", [], ["3x4xi32", "3x4xf32"], """
  %0 = stablehlo.iota dim = 1 : tensor<3x4xi32>
  %1 = stablehlo.iota dim = 0 : tensor<3x4xf32>
  return %0, %1 : tensor<3x4xi32>, tensor<3x4xf32>"""),
    case("dynamic_slice", ["6x5xf32", "i32", "i32"], ["3x2xf32"], """
  %0 = stablehlo.dynamic_slice %a0, %a1, %a2, sizes = [3, 2] : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>""", ["normal", "index", "index"]),
    case("dynamic_update_slice", ["6x5xf32", "2x3xf32", "i32", "i32"], ["6x5xf32"], """
  %0 = stablehlo.dynamic_update_slice %a0, %a1, %a2, %a3 : (tensor<6x5xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>""", ["normal", "normal", "index", "index"]),
]

LINALG = [
    case("dot_general-batch", ["2x3x4x5xf32", "2x5x4x6xf32"], ["2x3x6xf32"], """
  %0 = stablehlo.dot_general %a0, %a1, batching_dims = [0] x [0], contracting_dims = [2, 3] x [2, 1] : (tensor<2x3x4x5xf32>, tensor<2x5x4x6xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>""", tol=(1e-4, 1e-5)),
    case("dot_general-bf16-to-f32", ["3x8xf32", "8x4xf32"], ["3x4xf32", "3x4xf32"], """
  %a = stablehlo.convert %a0 : (tensor<3x8xf32>) -> tensor<3x8xbf16>
  %b = stablehlo.convert %a1 : (tensor<8x4xf32>) -> tensor<8x4xbf16>
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x8xbf16>, tensor<8x4xbf16>) -> tensor<3x4xf32>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x8xbf16>, tensor<8x4xbf16>) -> tensor<3x4xbf16>
  %2 = stablehlo.convert %1 : (tensor<3x4xbf16>) -> tensor<3x4xf32>
  return %0, %2 : tensor<3x4xf32>, tensor<3x4xf32>""", tol=(1e-2, 1e-2)),
    case("dot_general-int", ["3x4xi32", "4x2xi32"], ["3x2xi32"], """
  %0 = stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : (tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>"""),
    case("convolution", ["2x7x6x3xf32", "3x2x3x4xf32"], ["2x3x6x4xf32"], """
  %0 = stablehlo.convolution(%a0, %a1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {stride = [2, 1], pad = [[1, 0], [0, 1]], rhs_dilate = [1, 1]}
      {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x6x3xf32>, tensor<3x2x3x4xf32>) -> tensor<2x3x6x4xf32>
  return %0 : tensor<2x3x6x4xf32>""", tol=(1e-4, 1e-5)),
    case("convolution-groups-dilation", ["1x4x9xf32", "6x2x3xf32"], ["1x6x9xf32"], """
  %0 = stablehlo.convolution(%a0, %a1) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0],
      window = {pad = [[2, 2]], lhs_dilate = [1], rhs_dilate = [2], reverse = [true]}
      {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x4x9xf32>, tensor<6x2x3xf32>) -> tensor<1x6x9xf32>
  return %0 : tensor<1x6x9xf32>""", tol=(1e-4, 1e-5)),
    case("convolution-batch-groups", ["4x5x2xf32", "3x2x6xf32"], ["2x3x6xf32"], """
  %0 = stablehlo.convolution(%a0, %a1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f],
      window = {lhs_dilate = [2]}
      {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<4x5x2xf32>, tensor<3x2x6xf32>) -> tensor<2x7x6xf32>
  %1 = stablehlo.slice %0 [0:2, 0:3, 0:6] : (tensor<2x7x6xf32>) -> tensor<2x3x6xf32>
  return %1 : tensor<2x3x6xf32>""", tol=(1e-4, 1e-5)),
]

REGIONS = [
    case("reduce-add-max", ["4x5x6xf32"], ["5xf32", "4x6xf32"], """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%a0 init: %z) applies stablehlo.add across dimensions = [0, 2] : (tensor<4x5x6xf32>, tensor<f32>) -> tensor<5xf32>
  %1 = stablehlo.reduce(%a0 init: %m) applies stablehlo.maximum across dimensions = [1] : (tensor<4x5x6xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<5xf32>, tensor<4x6xf32>""", tol=(1e-5, 1e-5)),
    case("reduce-argmax", ["4x7xf32"], ["4xf32", "4xi32"], """
  %iota = stablehlo.iota dim = 1 : tensor<4x7xi32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%a0 init: %m), (%iota init: %z) across dimensions = [1] : (tensor<4x7xf32>, tensor<4x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
    reducer(%x: tensor<f32>, %y: tensor<f32>) (%i: tensor<i32>, %j: tensor<i32>) {
      %gt = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %eq = stablehlo.compare EQ, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %lt = stablehlo.compare LT, %i, %j : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %tie = stablehlo.and %eq, %lt : tensor<i1>
      %pick = stablehlo.or %gt, %tie : tensor<i1>
      %v = stablehlo.select %pick, %x, %y : tensor<i1>, tensor<f32>
      %k = stablehlo.select %pick, %i, %j : tensor<i1>, tensor<i32>
      stablehlo.return %v, %k : tensor<f32>, tensor<i32>
    }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>"""),
    case("reduce_window", ["2x6x5xf32"], ["2x3x3xf32", "2x6x5xf32"], """
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a0, %m) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %r = stablehlo.maximum %x, %y : tensor<f32>
      stablehlo.return %r : tensor<f32>
  }) {window_dimensions = array<i64: 1, 3, 3>, window_strides = array<i64: 1, 2, 2>,
      padding = dense<[[0, 0], [1, 1], [1, 1]]> : tensor<3x2xi64>} : (tensor<2x6x5xf32>, tensor<f32>) -> tensor<2x3x3xf32>
  %1 = "stablehlo.reduce_window"(%a0, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %r = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %r : tensor<f32>
  }) {window_dimensions = array<i64: 1, 6, 1>, padding = dense<[[0, 0], [5, 0], [0, 0]]> : tensor<3x2xi64>} : (tensor<2x6x5xf32>, tensor<f32>) -> tensor<2x6x5xf32>
  return %0, %1 : tensor<2x3x3xf32>, tensor<2x6x5xf32>""", tol=(1e-5, 1e-5)),
    case("reduce_window-dilations", ["5x4xf32"], ["5x3xf32"], """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a0, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %r = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %r : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, base_dilations = array<i64: 1, 2>, window_dilations = array<i64: 2, 2>,
      window_strides = array<i64: 1, 2>, padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<5x4xf32>, tensor<f32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>""", tol=(1e-5, 1e-5)),
    case("select_and_scatter", ["4x6xf32", "2x3xf32"], ["4x6xf32"], """
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%a0, %a1, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>,
      padding = dense<[[1, 0], [1, 0]]> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>"""),
    case("sort-keys-values", ["3x6xf32", "3x6xi32"], ["3x6xf32", "3x6xi32"], """
  %0:2 = "stablehlo.sort"(%a0, %a1) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>):
      %c = stablehlo.compare GT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<3x6xf32>, tensor<3x6xi32>) -> (tensor<3x6xf32>, tensor<3x6xi32>)
  return %0#0, %0#1 : tensor<3x6xf32>, tensor<3x6xi32>"""),
    case("sort-lexicographic", ["8xi32", "8xi32"], ["8xi32", "8xi32"], """
  %0:2 = "stablehlo.sort"(%a0, %a1) ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>, %i: tensor<i32>, %j: tensor<i32>):
      %lt = stablehlo.compare LT, %x, %y : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %eq = stablehlo.compare EQ, %x, %y : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %lt2 = stablehlo.compare LT, %i, %j : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %t = stablehlo.and %eq, %lt2 : tensor<i1>
      %c = stablehlo.or %lt, %t : tensor<i1>
      stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xi32>, tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>)
  return %0#0, %0#1 : tensor<8xi32>, tensor<8xi32>""", ["small", "small"]),
    case("gather-embedding", ["10x4xf32", "3x2xi32"], ["3x2x4xf32"], """
  %0 = "stablehlo.gather"(%a0, %a1) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<3x2xi32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>""", ["normal", "index"]),
    case("gather-batching-clamp", ["2x5x6xf32", "2x3x2xi32"], ["2x3x2xf32"], """
  %0 = "stablehlo.gather"(%a0, %a1) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1],
      operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1, 2], index_vector_dim = 2>,
      slice_sizes = array<i64: 1, 1, 2>} : (tensor<2x5x6xf32>, tensor<2x3x2xi32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>""", ["normal", "index"]),
    case("scatter-add", ["6x3xf32", "4x1xi32", "4x3xf32"], ["6x3xf32"], """
  %0 = "stablehlo.scatter"(%a0, %a1, %a2) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<6x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>""", ["normal", "index", "normal"]),
    case("scatter-custom-body", ["6xf32", "5x1xi32", "5xf32"], ["6xf32"], """
  %0 = "stablehlo.scatter"(%a0, %a1, %a2) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %m = stablehlo.multiply %x, %y : tensor<f32>
      %s = stablehlo.add %m, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<6xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>""", ["normal", "nonneg", "normal"]),
    case("scatter-batching", ["2x4x3xf32", "2x2x1xi32", "2x2x3xf32"], ["2x4x3xf32"], """
  %0 = "stablehlo.scatter"(%a0, %a1, %a2) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      stablehlo.return %y : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [1],
      input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1],
      index_vector_dim = 2>, unique_indices = true} : (tensor<2x4x3xf32>, tensor<2x2x1xi32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>""", ["normal", "nonneg", "normal"]),
]

CONTROL = [
    case("while-call", ["3xf32"], ["3xf32", "i32"], """
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %z, %x = %a0) : tensor<i32>, tensor<3xf32>
  cond {
    %n = stablehlo.constant dense<5> : tensor<i32>
    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %y = func.call @step(%x) : (tensor<3xf32>) -> tensor<3xf32>
    stablehlo.return %j, %y : tensor<i32>, tensor<3xf32>
  }
  return %0#1, %0#0 : tensor<3xf32>, tensor<i32>
}
func.func private @step(%x: tensor<3xf32>) -> tensor<3xf32> {
  %h = stablehlo.constant dense<0.5> : tensor<3xf32>
  %y = stablehlo.multiply %x, %h : tensor<3xf32>
  %z = stablehlo.sine %y : tensor<3xf32>
  return %z : tensor<3xf32>"""),
    case("case-if", ["i32", "4xf32"], ["4xf32", "4xf32"], """
  %0 = "stablehlo.case"(%a0) ({
    %r = stablehlo.negate %a1 : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }, {
    %r = stablehlo.exponential %a1 : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %p = stablehlo.compare GT, %a0, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %1 = "stablehlo.if"(%p) ({
    stablehlo.return %a1 : tensor<4xf32>
  }, {
    %r = stablehlo.abs %a1 : tensor<4xf32>
    stablehlo.return %r : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>""", ["index", "normal"]),
]


@pytest.mark.parametrize("text,args,kinds,tol", ELEMENTWISE + SHAPES + LINALG + REGIONS + CONTROL)
def test_matches_reference_interpreter(text, args, kinds, tol):
    rng = np.random.default_rng(1234)
    for _ in range(2):
        inputs = [gen(spec, rng, kind) for spec, kind in zip(args, kinds)]
        check(text, inputs, rtol=tol[0], atol=tol[1])
