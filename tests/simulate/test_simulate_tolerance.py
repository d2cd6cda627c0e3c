"""`sdylog simulate`'s default tolerance follows the compared value's dtype
(rev33 F5): a bf16 or f16 sum computed in pieces on several devices, each
rounded to the dtype and then added, differs from the whole by about an ulp,
far above the 1e-4 that suits f32. An explicit --rtol still wins, and a real
error (a partial sum reduced twice) is still found."""
from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.simulate.simulate import _errors, default_rtol

# A dot contracting over "model": each device's partial sum rounds to the
# dtype, then the all-reduce adds them (rev33 jx/bf16_dot.mlir, minimized).
DOT = """sdy.mesh @mesh = <["model"=2]>
func.func public @main(%arg0: tensor<8x8xDT> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<8x4xDT> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<8x4xDT> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xDT>, tensor<8x4xDT>) -> tensor<8x4xDT>
  return %0 : tensor<8x4xDT>
}"""

# The same dot written per device, its partial sums all-reduced twice
# (twice the product): a real error, far above the default bf16 tolerance.
REDUCED_TWICE = """sdy.mesh @mesh = <["model"=2]>
func.func public @main(%arg0: tensor<8x8xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<8x4xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<8x4xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x8xbf16>, tensor<8x4xbf16>) -> tensor<8x4xbf16>
  %1 = sdy.all_reduce {"model"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x4xbf16>
  %2 = sdy.all_reduce {"model"} %1 out_sharding=<@mesh, [{}, {}]> : tensor<8x4xbf16>
  return %2 : tensor<8x4xbf16>
}"""


def simulate(tmp_path, text, *args):
    path = tmp_path / "t.mlir"
    path.write_text(text)
    r = CliRunner().invoke(main, ["simulate", str(path), "--json", *args])
    return r.exit_code, json.loads(r.stdout) if r.stdout.startswith("{") else r.output


def test_default_rtol_by_dtype():
    assert default_rtol(np.dtype(np.float32)) == 1e-4
    assert default_rtol(np.dtype(np.float64)) == 1e-4
    assert default_rtol(np.dtype(np.complex64)) == 1e-4
    assert default_rtol(np.dtype(np.float16)) == 4 * 2.0 ** -10
    assert default_rtol(np.dtype(ml_dtypes.bfloat16)) == 4 * 2.0 ** -7


@pytest.mark.parametrize("dtype, delta, ok", [
    (np.float32, 2.0 ** -9, False), (np.float16, 2.0 ** -9, True),
    (ml_dtypes.bfloat16, 2.0 ** -7, True), (ml_dtypes.bfloat16, 2.0 ** -3, False)])
def test_default_tolerance_of_a_few_ulps(dtype, delta, ok):
    """1 + delta against 1: within 4 eps of f16 (2^-10) and bf16 (2^-7), not
    within 1e-4 (f32), nor 16 bf16 ulps."""
    want = np.array([1.0, -0.5], dtype=dtype)
    got = np.array([1.0 + delta, -0.5], dtype=dtype)
    assert got[0] != want[0]
    assert _errors(got, want, None, 1e-5)[0] is ok
    assert _errors(got, want, 1e-4, 1e-5)[0] is False     # (a given rtol is used as it is)


@pytest.mark.parametrize("dt", ["bf16", "f16"])
@pytest.mark.parametrize("seed", [0, 1, 3])
def test_partial_sums_in_a_narrow_float_match_by_default(tmp_path, dt, seed):
    rc, report = simulate(tmp_path, DOT.replace("DT", dt), "--seed", str(seed))
    assert rc == 0 and report["match"], report


def test_an_explicit_rtol_wins(tmp_path):
    rc, report = simulate(tmp_path, DOT.replace("DT", "bf16"), "--seed", "1", "--rtol", "1e-4")
    assert rc == 1 and not report["match"], report
    assert report["max_rel_error"] > 1e-4


def test_a_real_bf16_error_is_still_a_mismatch(tmp_path):
    rc, report = simulate(tmp_path, REDUCED_TWICE)
    assert rc == 1 and not report["match"], report
    assert report["max_rel_error"] > 4 * 2.0 ** -7


def test_help_says_the_default():
    r = CliRunner().invoke(main, ["simulate", "--help"])
    assert "4 eps of the result's dtype" in " ".join(r.output.split())
