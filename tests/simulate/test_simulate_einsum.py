"""stablehlo.einsum and unary_einsum in the simulator (the StableHLO reference
interpreter has no einsum: the expected values are numpy's)."""
from __future__ import annotations

import numpy as np

from sdylog.ir import parse_module
from sdylog.simulate.program import Program


def run(text, *args):
    module = parse_module(text, "x.mlir")
    with module.context:
        return [np.asarray(r) for r in Program(module, "x.mlir").run("main", list(args))]


def test_einsum_and_unary_einsum():
    text = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xi32>)
        -> (tensor<2x4xf32>, tensor<2xf32>, tensor<3xi32>, tensor<3x2xf32>) {
      %0 = stablehlo.einsum %a, %b, config = "ab,bc->ac" : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %1 = stablehlo.unary_einsum %a, config = "ab->a" : (tensor<2x3xf32>) -> tensor<2xf32>
      %2 = stablehlo.einsum %c, %c, config = "i,i->i" : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
      %3 = stablehlo.unary_einsum %a, config = "ab->ba" : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<2xf32>, tensor<3xi32>, tensor<3x2xf32>
    }"""
    a = np.array([[0.5, -1.0, 2.0], [1.0, 3.0, -2.0]], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    c = np.array([1, -2, 3], np.int32)
    mm, rows, sq, tr = run(text, a, b, c)
    assert mm.dtype == np.float32 and sq.dtype == np.int32
    np.testing.assert_allclose(mm, a @ b, rtol=1e-6)
    np.testing.assert_allclose(rows, a.sum(axis=1), rtol=1e-6)
    assert sq.tolist() == [1, 4, 9]
    np.testing.assert_array_equal(tr, a.T)



def test_einsum_is_a_supported_op():
    from sdylog.simulate.registry import supported_ops
    assert {"stablehlo.einsum", "stablehlo.unary_einsum"} <= set(supported_ops())
