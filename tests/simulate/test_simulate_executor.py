"""Executor behaviour the reference interpreter cannot check: buffer reuse, constants
of every element type, ops the reference lacks (dot, fft), custom calls, errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from sdylog.ir import parse_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.simulate.program import Program


def run(text, *args, fn="main"):
    module = parse_module(text, "x.mlir")
    with module.context:
        return [np.asarray(r) for r in Program(module, "x.mlir").run(fn, list(args))]


def test_in_place_reuse_keeps_views_alive():
    # %e is fresh and dies at %m, but its transpose %t is used after: %m must not overwrite it.
    text = """func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
      %e = stablehlo.exponential %a : tensor<3x3xf32>
      %t = stablehlo.transpose %e, dims = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
      %m = stablehlo.negate %e : tensor<3x3xf32>
      %s = stablehlo.add %t, %m : tensor<3x3xf32>
      %n = stablehlo.negate %s : tensor<3x3xf32>
      return %n, %t : tensor<3x3xf32>, tensor<3x3xf32>
    }"""
    a = np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    n, t = run(text, a)
    e = np.exp(a)
    np.testing.assert_allclose(t, e.T, rtol=1e-6)
    np.testing.assert_allclose(n, -(e.T - e), rtol=1e-6)
    np.testing.assert_array_equal(a, np.arange(9, dtype=np.float32).reshape(3, 3) / 10)  # inputs untouched


def test_while_reruns_compiled_body():
    text = """func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %z, %v = %x) : tensor<i32>, tensor<4xi32>
      cond {
        %n = stablehlo.constant dense<100> : tensor<i32>
        %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %j = stablehlo.add %i, %one : tensor<i32>
        %b = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<i32>) -> tensor<4xi32>
        %w = stablehlo.add %v, %b : tensor<4xi32>
        stablehlo.return %j, %w : tensor<i32>, tensor<4xi32>
      }
      return %r#1 : tensor<4xi32>
    }"""
    x = np.array([1, 2, 3, 4], np.int32)
    (out,) = run(text, x)
    np.testing.assert_array_equal(out, x + 100)
    np.testing.assert_array_equal(x, [1, 2, 3, 4])


@pytest.mark.parametrize("literal,dtype,expected", [
    ("dense<[1.5, -2.0, 0x7FC0]> : tensor<3xbf16>", ml_dtypes.bfloat16, [1.5, -2.0, np.nan]),
    ("dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>", np.complex64, [1 + 2j, 3 - 4j]),
    ("dense<[1, -2, 7]> : tensor<3xi4>", ml_dtypes.int4, [1, -2, 7]),
    ("dense<[true, false]> : tensor<2xi1>", np.bool_, [True, False]),
    ("dense<[4294967295, 1]> : tensor<2xui32>", np.uint32, [4294967295, 1]),
    ("dense<2.5> : tensor<2xf16>", np.float16, [2.5, 2.5]),
])
def test_constants_of_every_element_type(literal, dtype, expected):
    t = literal.rsplit(": ", 1)[1]
    (out,) = run(f"""func.func @main() -> {t} {{
      %c = stablehlo.constant {literal}
      return %c : {t}
    }}""")
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.astype(np.complex128 if dtype == np.complex64 else np.float64),
                                  np.array(expected))


def test_dot_and_fft_against_numpy():
    text = """func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %x: tensor<2x8xcomplex<f32>>)
        -> (tensor<3x5xf32>, tensor<2x8xcomplex<f32>>, tensor<2x8xcomplex<f32>>) {
      %0 = stablehlo.dot %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
      %1 = stablehlo.fft %x, type = FFT, length = [8] : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
      %2 = stablehlo.fft %1, type = IFFT, length = [8] : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
      return %0, %1, %2 : tensor<3x5xf32>, tensor<2x8xcomplex<f32>>, tensor<2x8xcomplex<f32>>
    }"""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    x = (rng.standard_normal((2, 8)) + 1j * rng.standard_normal((2, 8))).astype(np.complex64)
    d, f, g = run(text, a, b, x)
    np.testing.assert_allclose(d, a @ b, rtol=1e-5)
    np.testing.assert_allclose(f, np.fft.fft(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g, x, rtol=1e-4, atol=1e-5)
    assert f.dtype == np.complex64


def test_integer_division_by_zero_follows_stablehlo():
    text = """func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
      %0 = stablehlo.divide %a, %b : tensor<3xi32>
      %1 = stablehlo.remainder %a, %b : tensor<3xi32>
      return %0, %1 : tensor<3xi32>, tensor<3xi32>
    }"""
    q, r = run(text, np.array([7, -7, -2147483648], np.int32), np.array([0, 2, -1], np.int32))
    assert q.tolist() == [-1, -3, -2147483648]
    assert r.tolist() == [7, -1, 0]


def test_custom_calls():
    ok = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    np.testing.assert_array_equal(run(ok, np.ones(2, np.float32))[0], np.ones(2))
    with pytest.raises(SdylogError, match=r"x.mlir:2:\d+: error: the simulator cannot execute custom_call @my_kernel"):
        run(ok.replace("@Sharding", "@my_kernel"), np.ones(2, np.float32))


def test_runtime_failure_is_located():
    text = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %0 = func.call @missing(%a) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }
    func.func private @missing(%a: tensor<2xf32>) -> tensor<2xf32>"""
    with pytest.raises(SdylogError, match="has no body"):
        run(text, np.ones(2, np.float32))


def test_chlo_erf_top_k_and_map():
    import scipy.special
    text = """func.func @main(%a: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x5xf32>) {
      %0 = chlo.erf %a : tensor<2x5xf32> -> tensor<2x5xf32>
      %1:2 = chlo.top_k(%a, k = 2) : tensor<2x5xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
      %2 = "stablehlo.map"(%a, %0) ({
        ^bb0(%x: tensor<f32>, %y: tensor<f32>):
          %m = stablehlo.multiply %x, %y : tensor<f32>
          stablehlo.return %m : tensor<f32>
      }) {dimensions = array<i64: 0, 1>} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
      return %0, %1#0, %1#1, %2 : tensor<2x5xf32>, tensor<2x2xf32>, tensor<2x2xi32>, tensor<2x5xf32>
    }"""
    a = np.array([[0.5, -1.0, 2.0, 0.1, 3.0], [1.0, 1.0, -2.0, 4.0, 0.0]], np.float32)
    erf, vals, idx, prod = run(text, a)
    np.testing.assert_allclose(erf, scipy.special.erf(a), rtol=1e-6)
    np.testing.assert_array_equal(vals, [[3.0, 2.0], [4.0, 1.0]])
    np.testing.assert_array_equal(idx, [[4, 2], [3, 0]])
    np.testing.assert_allclose(prod, a * erf, rtol=1e-6)
