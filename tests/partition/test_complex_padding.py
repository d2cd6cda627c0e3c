"""Padding complex values (r33's jx/fft_nd.mlir: an rfft of rows sharded on
4 devices, 10 rows): pad-for-divisibility pads with zeros of the element
type, and build.zeros had none for complex types ("sdylog cannot pad a value
of element type complex<f32> here")."""
from __future__ import annotations

import pytest
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir

from sdylog.partition.build import zeros
from sdylog.simulate.simulate import simulate_text

RFFT_ROWS = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func @main(%arg0: tensor<10x8xf32>) -> tensor<10x5xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"data"}, {}]> : tensor<10x8xf32>
  %1 = call @fft(%0) : (tensor<10x8xf32>) -> tensor<10x5xcomplex<f32>>
  %2 = stablehlo.real %1 : (tensor<10x5xcomplex<f32>>) -> tensor<10x5xf32>
  return %2 : tensor<10x5xf32>
}
func.func private @fft(%arg0: tensor<10x8xf32>) -> tensor<10x5xcomplex<f32>> {
  %0 = stablehlo.fft %arg0, type = RFFT, length = [8] : (tensor<10x8xf32>) -> tensor<10x5xcomplex<f32>>
  return %0 : tensor<10x5xcomplex<f32>>
}
"""

@pytest.mark.parametrize("element", ["complex<f32>", "complex<f64>"])
def test_zeros_of_a_complex_type(element):
    with jmlir.make_ir_context(), ir.Location.unknown():
        t = ir.RankedTensorType.parse(f"tensor<4x3x{element}>")
        z = zeros(t)
        assert z is not None and z.is_splat and z.type == t
        assert "(0.000000e+00,0.000000e+00)" in str(z)


def test_rfft_of_rows_that_do_not_divide():
    report = simulate_text(RFFT_ROWS, "fft_nd.mlir", seed=1)
    assert report.ok, report.text()
