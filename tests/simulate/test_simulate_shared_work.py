"""Work the simulator does once instead of per device or per index, and the
plain versions it must agree with bit for bit: a collective's combination
computed once per process group (Communicator.exchange's `combine`), and the
in-order float dot with all its products at once (linalg.in_order_matmul)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sdylog.ir import parse_module
from sdylog.simulate.mesh import Communicator, DeviceRun, run_on_devices
from sdylog.simulate.ops.linalg import in_order_matmul, in_order_matmul_reference
from sdylog.simulate.program import DeviceRuntime, Program


def run_parallel(text, per_device_args):
    module = parse_module(text, "shared.mlir")
    with module.context:
        program = Program(module, "shared.mlir")
        return run_on_devices(program, [[DeviceRun("main", a) for a in per_device_args]])[0]


# ---------------------------------------------------------------- in-order dot
_FLOATS = st.sampled_from([np.float16, np.float32, np.float64])


@st.composite
def _operands(draw):
    dt = draw(_FLOATS)
    b, m, k, n = (draw(st.integers(0 if i == 2 else 1, 9)) for i in range(4))
    elements = st.floats(width=np.finfo(dt).bits, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    a = draw(hnp.arrays(dt, (b, m, k), elements=elements | st.sampled_from([0.0, -0.0])))
    c = draw(hnp.arrays(dt, (b, k, n), elements=elements | st.sampled_from([0.0, -0.0])))
    return a, c


@settings(max_examples=200, deadline=None)
@given(_operands())
def test_in_order_matmul_is_the_loop_bit_for_bit(ops):
    a, b = ops
    with np.errstate(all="ignore"):
        want, got = in_order_matmul_reference(a, b), in_order_matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("shape", [(1, 8, 128, 64), (2, 1, 300, 2), (1, 2, 1000, 1), (1, 1, 500, 1), (3, 4, 1, 5)])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_in_order_matmul_of_long_sums_is_the_loop_bit_for_bit(shape, dt):
    """Long sums of terms of very different magnitudes, where any other order
    (pairwise, blocked) rounds differently."""
    rng = np.random.default_rng(sum(shape))
    (B, M, K, N) = shape
    a = (rng.standard_normal((B, M, K)) * np.exp(rng.standard_normal((B, M, K)) * 3)).astype(dt)
    b = rng.standard_normal((B, K, N)).astype(dt)
    with np.errstate(all="ignore"):
        want, got = in_order_matmul_reference(a, b), in_order_matmul(a, b)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_in_order_matmul_of_negative_zeros_is_positive_zero():
    """(0 + -0) is +0: the sum starts from zero, as the loop's does."""
    a = np.full((1, 2, 3), -0.0, np.float32)
    b = np.ones((1, 3, 2), np.float32)
    assert not np.signbit(in_order_matmul(a, b)).any()


# ---------------------------------------------------------------- combine once per group
def test_exchange_combines_once_per_group_and_shares_the_result():
    comm = Communicator(4)
    calls, results = [], {}
    lock = threading.Lock()

    def combine(per):
        with lock:
            calls.append(list(per))
        return sum(per)

    def device(d):
        rt = DeviceRuntime(partition_id=d, num_partitions=4, comm=comm)
        group = (0, 2) if d % 2 == 0 else (1, 3)
        results[d] = comm.exchange(rt, group, "all_reduce", 10 ** d, 8, combine=combine)
        comm.finished(d)

    threads = [threading.Thread(target=device, args=(d,)) for d in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(tuple, calls)) == [(1, 100), (10, 1000)]   # in group order, once per group
    assert results == {0: 101, 2: 101, 1: 1010, 3: 1010}


_ALL_REDUCE = """func.func @main(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.add %0, %y : tensor<4x3xf32>
  %2 = stablehlo.multiply %1, %1 : tensor<4x3xf32>
  %3 = "stablehlo.all_gather"(%2) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, use_global_device_ids} : (tensor<4x3xf32>) -> tensor<8x3xf32>
  %4 = stablehlo.slice %3 [0:4, 0:3] : (tensor<8x3xf32>) -> tensor<4x3xf32>
  %5 = stablehlo.negate %4 : tensor<4x3xf32>
  return %0, %2, %5 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}"""


def test_shared_results_are_not_written_by_any_device():
    """Every device holds the group's one all_reduce and all_gather result;
    the element-wise ops after them make new arrays, and the shared arrays
    are read-only."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(4)]
    ys = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(4)]
    out = run_parallel(_ALL_REDUCE, [[x, y] for x, y in zip(xs, ys)])
    total = ((xs[0] + xs[1]) + xs[2]) + xs[3]
    for d in range(4):
        assert out[d][0].tobytes() == total.tobytes()
        assert not out[d][0].flags.writeable
        np.testing.assert_array_equal(out[d][1], (total + ys[d]) * (total + ys[d]))
        first = 0 if d < 2 else 2
        np.testing.assert_array_equal(out[d][2], -((total + ys[first]) * (total + ys[first])))


def test_a_body_reading_the_device_id_runs_on_each_device():
    """A combiner that is not element-wise (here it reads partition_id) may
    give each device its own result: each device combines for itself."""
    text = """func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
      %0 = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %p = stablehlo.partition_id : tensor<ui32>
          %q = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
          %s = stablehlo.add %a, %b : tensor<i32>
          %t = stablehlo.add %s, %q : tensor<i32>
          stablehlo.return %t : tensor<i32>
      }) {replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xi32>) -> tensor<2xi32>
      return %0 : tensor<2xi32>
    }"""
    out = run_parallel(text, [[np.array([d, 10 * d], np.int32)] for d in range(3)])
    for d in range(3):
        assert out[d][0].tolist() == [0 + 1 + 2 + 2 * d, 0 + 10 + 20 + 2 * d]


@pytest.mark.parametrize("body, want", [("add", lambda a, b: a + b), ("maximum", np.maximum)])
def test_reduce_scatter_shares_the_sum_and_slices_per_device(body, want):
    text = f"""func.func @main(%x: tensor<4x2xf32>) -> tensor<2x2xf32> {{
      %0 = "stablehlo.reduce_scatter"(%x) ({{
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %m = stablehlo.{body} %a, %b : tensor<f32>
          stablehlo.return %m : tensor<f32>
      }}) {{scatter_dimension = 0 : i64, replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, use_global_device_ids}} : (tensor<4x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    }}"""
    rng = np.random.default_rng(1)
    x = [rng.standard_normal((4, 2)).astype(np.float32) for _ in range(2)]
    out = run_parallel(text, [[x[0]], [x[1]]])
    full = want(x[1], x[0])   # group order [1, 0]
    np.testing.assert_array_equal(out[1][0], full[0:2])
    np.testing.assert_array_equal(out[0][0], full[2:4])
    assert out[0][0].flags.writeable   # a device's own slice
