"""Simulated devices: collectives move data by their process groups; errors and deadlocks are reported."""
from __future__ import annotations

import numpy as np
import pytest

from sdylog.ir import parse_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.simulate.mesh import CollectiveStats, DeviceRun, run_on_devices
from sdylog.simulate.program import Program


def run_parallel(text, per_device_args, fn="main", replicas=1):
    module = parse_module(text, "mesh.mlir")
    with module.context:
        program = Program(module, "mesh.mlir")
        n = len(per_device_args) // replicas
        runs = [[DeviceRun(fn, per_device_args[r * n + p]) for p in range(n)] for r in range(replicas)]
        stats = CollectiveStats()
        out = run_on_devices(program, runs, stats=stats)
    return [dev for row in out for dev in row], stats


def blocks(n, shape=(2, 3)):
    return [[np.full(shape, 10 ** d, dtype=np.int32) + np.arange(np.prod(shape), dtype=np.int32).reshape(shape)]
            for d in range(n)]


def test_all_reduce_sums_within_flattened_groups():
    text = """func.func @main(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
      %0 = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<i32>, %b: tensor<i32>):
          %s = stablehlo.add %a, %b : tensor<i32>
          stablehlo.return %s : tensor<i32>
      }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2x3xi32>) -> tensor<2x3xi32>
      return %0 : tensor<2x3xi32>
    }"""
    args = blocks(4)
    out, stats = run_parallel(text, args)
    np.testing.assert_array_equal(out[0][0], args[0][0] + args[2][0])
    np.testing.assert_array_equal(out[3][0], args[1][0] + args[3][0])
    assert stats.counts == {"all_reduce": 2}
    assert stats.bytes == {"all_reduce": 4 * 6 * 4}


def test_all_gather_all_to_all_reduce_scatter():
    text = """func.func @main(%x: tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>, tensor<1x4xf32>) {
      %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2x4xf32>) -> tensor<4x4xf32>
      %1 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
      %2 = "stablehlo.reduce_scatter"(%x) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %m = stablehlo.maximum %a, %b : tensor<f32>
          stablehlo.return %m : tensor<f32>
      }) {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, use_global_device_ids} : (tensor<2x4xf32>) -> tensor<1x4xf32>
      return %0, %1, %2 : tensor<4x4xf32>, tensor<4x2xf32>, tensor<1x4xf32>
    }"""
    rng = np.random.default_rng(0)
    x = [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2)]
    out, _ = run_parallel(text, [[x[0]], [x[1]]])
    for d in range(2):
        np.testing.assert_array_equal(out[d][0], np.concatenate([x[1], x[0]]))   # group order [1, 0]
        np.testing.assert_array_equal(out[d][1], np.concatenate([x[0][:, 2 * d:2 * d + 2], x[1][:, 2 * d:2 * d + 2]]))
        np.testing.assert_array_equal(out[d][2], np.maximum(x[0], x[1])[d:d + 1])


def test_collective_permute_and_ids():
    text = """func.func @main(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<ui32>, tensor<ui32>) {
      %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xi32>) -> tensor<2xi32>
      %p = stablehlo.partition_id : tensor<ui32>
      %r = stablehlo.replica_id : tensor<ui32>
      return %0, %p, %r : tensor<2xi32>, tensor<ui32>, tensor<ui32>
    }"""
    args = [[np.array([d, d], np.int32)] for d in range(6)]
    out, _ = run_parallel(text, args, replicas=2)   # 2 replicas x 3 partitions
    got = [o[0].tolist() for o in out]
    assert got == [[0, 0], [0, 0], [1, 1], [0, 0], [3, 3], [4, 4]]   # partition 0 receives nothing
    assert [int(o[1]) for o in out] == [0, 1, 2, 0, 1, 2]
    assert [int(o[2]) for o in out] == [0, 0, 0, 1, 1, 1]


def test_collective_on_one_device_needs_a_mesh():
    text = """func.func @main(%x: tensor<2xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    module = parse_module(text, "one.mlir")
    with module.context, pytest.raises(SdylogError) as e:
        Program(module, "one.mlir").run("main", [np.zeros(2, np.float32)])
    assert "one.mlir:2:" in str(e.value) and "needs the 2 devices" in str(e.value)


def test_mismatched_collectives_deadlock_is_reported():
    text = """func.func @main(%x: tensor<2xf32>) -> tensor<4xf32> {
      %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    func.func @idle(%x: tensor<2xf32>) -> tensor<4xf32> {
      %0 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    module = parse_module(text, "dl.mlir")
    with module.context:
        program = Program(module, "dl.mlir")
        runs = [[DeviceRun("main", [np.zeros(2, np.float32)]), DeviceRun("idle", [np.zeros(2, np.float32)])]]
        with pytest.raises(SdylogError, match="deadlock"):
            run_on_devices(program, runs)


def test_sdy_collectives_move_shards_on_the_mesh():
    """Shardy's collectives run on per-device shards and agree with the converted program."""
    text = """sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>})
        -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
      %0 = sdy.all_gather [{"y"}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x4xf32>
      %1 = sdy.all_to_all [{"x"}: 0->1] %0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x4xf32>
      %2 = sdy.all_reduce {"y"} %1 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x4xf32>
      %3 = sdy.all_slice [{"y"}, {}] %2 out_sharding=<@mesh, [{"y"}, {"x"}]> : tensor<8x4xf32>
      %4 = sdy.collective_permute %3 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
      %5 = sdy.reduce_scatter [{}, {}] %4 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
      return %4 : tensor<8x4xf32>
    }"""
    from sdylog.passes import PassContext, lookup, parse_options
    rng = np.random.default_rng(3)
    full = rng.standard_normal((8, 4)).astype(np.float32)
    shards = [[full[2 * d:2 * d + 2]] for d in range(4)]
    text = text.replace("      %5 = sdy.reduce_scatter [{}, {}] %4 out_sharding=<@mesh, [{\"x\"}, {\"y\"}]> : tensor<8x4xf32>\n", "")
    direct, stats = run_parallel(text, shards)
    module = parse_module(text, "c.mlir")
    with module.context:
        name = "sdy-convert-global-to-local"
        lookup(name).load()(module, parse_options(name, None), PassContext(filename="c.mlir"))
        converted = str(module)
    assert "sdy.all_gather" not in converted and "stablehlo.all_gather" in converted
    lowered, _ = run_parallel(converted, shards)
    # global meaning: all_reduce over "y" doubles the data (both y-devices hold the same values)
    for d in range(4):
        x, y = d // 2, d % 2
        np.testing.assert_allclose(direct[d][0], 2 * full[4 * x:4 * x + 4, 2 * y:2 * y + 2], rtol=1e-6)
        np.testing.assert_allclose(lowered[d][0], direct[d][0], rtol=1e-6)
    assert set(stats.counts) == {"sdy.all_gather", "sdy.all_to_all", "sdy.all_reduce", "sdy.collective_permute"}


def test_sdy_reductions_on_the_mesh_match_the_converted_program():
    text = """sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @main(%arg0: tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
        -> (tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
      %0 = sdy.reduce_scatter [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<4x4xi32>
      %1 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<4x4xi32>
      return %0, %1 : tensor<4x4xi32>, tensor<4x4xi32>
    }"""
    from sdylog.passes import PassContext, lookup, parse_options
    base = np.arange(16, dtype=np.int32).reshape(4, 4)
    args = [[base * 16 ** d] for d in range(4)]
    direct, _ = run_parallel(text, args)
    module = parse_module(text, "r.mlir")
    with module.context:
        name = "sdy-convert-global-to-local"
        lookup(name).load()(module, parse_options(name, None), PassContext(filename="r.mlir"))
        converted = str(module)
    lowered, _ = run_parallel(converted, args)
    total = sum(a[0] for a in args)
    for d in range(4):
        x, y = d // 2, d % 2
        np.testing.assert_array_equal(direct[d][0], total[2 * x:2 * x + 2, 2 * y:2 * y + 2])
        np.testing.assert_array_equal(direct[d][1], args[y][0] + args[2 + y][0])
        for k in range(2):
            np.testing.assert_array_equal(lowered[d][k], direct[d][k])


def test_mesh_axes_replica_groups_run_like_dense_groups():
    text = """sdy.mesh @m = <["x"=2, "y"=2]>
    func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x", "y"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) {
      %0 = sdy.all_gather [{"y"}] %a out_sharding=<@m, [{"x"}]> : tensor<8xf32>
      return %0 : tensor<8xf32>
    }"""
    from sdylog.passes.driver import optimize_text, parse_flags
    v3 = optimize_text(text, "v3.mlir", parse_flags(["--sdy-convert-global-to-local=enable-rgv3=true"]))
    assert "replica_group_mesh_axes" in v3
    shards = [[np.arange(2, dtype=np.float32) + 2 * d] for d in range(4)]
    out, _ = run_parallel(v3, shards)
    for d in range(4):
        x = d // 2
        np.testing.assert_array_equal(out[d][0], np.arange(4 * x, 4 * x + 4, dtype=np.float32))
