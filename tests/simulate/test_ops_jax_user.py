"""Ops JAX users emit (jax_user_ops.py: jnp.cbrt, lax.population_count,
jnp.fft, lax.top_k, lax.approx_max_k, jnp.linalg.cholesky / eigh / qr,
solve_triangular on CPU's LAPACK custom calls, chlo.polygamma...), lowered
with sharded arguments:

- the simulator computes what JAX computes on the same inputs;
- sdylog's propagation and explicit reshards print what Shardy prints
  (the ops Shardy's registry knows; it has no rule for CHLO ops, which XLA
  rewrites into element-wise StableHLO before Shardy sees them);
- the partitioned program, simulated, equals the unpartitioned one."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from generators import shardy_differential as diff
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text
from simulate_oracle import mine

HERE = Path(__file__).parent

# jax_user_ops.PROGRAMS's names (the module is not imported here: it sets up
# jax with 8 host devices, which this process must not do)
PROGRAMS = ("approx_max_k", "approx_min_k_dim0", "cbrt", "cholesky", "cholesky_c64", "complex", "eigh",
            "eigh_c64", "fft", "fft2", "irfft", "is_finite", "next_after", "optimization_barrier", "polygamma",
            "popcnt", "qr", "real_imag", "reduce_precision", "rfft", "solve_triangular",
            "solve_triangular_right", "top_k", "zeta")
FLAGS = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
# CHLO ops: no rule in Shardy's registry (sdylog gives them their XLA rewrite's).
NOT_IN_SHARDY = {"next_after", "polygamma", "zeta", "top_k"}
# A LAPACK solve's right-hand side sharded along a factor of its `custom`
# rule no result has: sdylog's full version gathers it before the call, as
# XLA does (rules/reshard/custom.dl); Shardy's leaves it. Compared with
# Shardy on the version that is Shardy's (the export's).
FULL_VERSION_GATHERS = {"solve_triangular", "solve_triangular_right"}


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    pytest.importorskip("jax")
    out = tmp_path_factory.mktemp("jax_user_ops")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    p = subprocess.run([sys.executable, str(HERE / "jax_user_ops.py"), str(out)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    return out


def test_every_program_is_tested(lowered):
    assert sorted(p.stem for p in lowered.glob("*.mlir")) == sorted(PROGRAMS)


def _load(lowered, name):
    text = (lowered / f"{name}.mlir").read_text()
    data = np.load(lowered / f"{name}.npz")
    ins = [data[f"in{i}"] for i in range(sum(k.startswith("in") for k in data))]
    outs = [data[f"out{i}"] for i in range(sum(k.startswith("out") for k in data))]
    return text, ins, outs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_simulator_computes_what_jax_computes(lowered, name):
    text, ins, want = _load(lowered, name)
    got = mine(text, ins)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.skipif(diff.missing_reason() is not None, reason=diff.missing_reason() or "")
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - NOT_IN_SHARDY))
def test_propagation_and_reshards_print_what_shardy_prints(lowered, name):
    text = (lowered / f"{name}.mlir").read_text()
    flags = FLAGS[:1] + ["-sdy-insert-explicit-reshards"] if name in FULL_VERSION_GATHERS else FLAGS
    ours = optimize_text(text, f"{name}.mlir", parse_flags(flags))
    theirs = diff.shardy(text, flags, with_reshards=True)
    assert ours.strip() == theirs.strip()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_partitioned_program_equals_the_unpartitioned(lowered, name):
    text = (lowered / f"{name}.mlir").read_text()
    report = simulate_text(text, f"{name}.mlir")
    assert report.partitioned
    assert report.ok, report.difference


NOT_DIVISIBLE = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%x: tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %y: tensor<6x5xf32>) -> tensor<6x5xf32> {
    %0 = OP %x, %y : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
    return %0 : tensor<6x5xf32>
  }
}
"""


@pytest.mark.parametrize("op", ["chlo.next_after", "chlo.polygamma", "chlo.zeta"])
def test_chlo_binary_ops_on_padded_shards(op):
    """6x5 on 4x2 devices: padded to 8x6 like any element-wise op (before,
    chlo.next_after was left unpadded and the partitioner failed on it)."""
    report = simulate_text(NOT_DIVISIBLE.replace("OP", op), "t.mlir")
    assert report.partitioned
    assert report.ok, report.difference


TOP_K_CALLS = """func.func private @neg_lt(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>,
                            %j: tensor<i32>) -> tensor<i1> {
  %na = stablehlo.negate %a : tensor<f32>
  %nb = stablehlo.negate %b : tensor<f32>
  %0 = stablehlo.compare LT, %na, %nb : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main(%x: tensor<3x7xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>, tensor<3x2xf32>, tensor<3x2xi32>,
                                         tensor<2x7xf32>, tensor<2x7xi32>) {
  %0:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.backend_config = {k = 2 : i64}}
    : (tensor<3x7xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  %1:2 = stablehlo.custom_call @mhlo.topk(%x) {mhlo.backend_config = {k = 2 : i64, largest = false}}
    : (tensor<3x7xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  %iota = stablehlo.iota dim = 0 : tensor<3x7xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %none = stablehlo.constant dense<-1> : tensor<i32>
  %2:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %none) {called_computations = [@neg_lt],
      mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.95 : f32,
                             reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}}
    : (tensor<3x7xf32>, tensor<3x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x7xf32>, tensor<2x7xi32>)
  return %0#0, %0#1, %1#0, %1#1, %2#0, %2#1 : tensor<3x2xf32>, tensor<3x2xi32>, tensor<3x2xf32>, tensor<3x2xi32>,
                                             tensor<2x7xf32>, tensor<2x7xi32>
}
"""


def test_top_k_custom_calls():
    """@mhlo.topk (largest first, or smallest with largest = false) and
    @ApproxTopK with a comparator that is not one compare (-a < -b: largest
    first, along dimension 0), run by the comparator itself."""
    x = np.random.default_rng(0).standard_normal((3, 7)).astype(np.float32)
    large, small = np.argsort(-x, axis=1)[:, :2], np.argsort(x, axis=1)[:, :2]
    down = np.argsort(-x, axis=0)[:2]
    got = mine(TOP_K_CALLS, [x])
    want = [np.take_along_axis(x, large, 1), large, np.take_along_axis(x, small, 1), small,
            np.take_along_axis(x, down, 0), down]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w.astype(g.dtype))
