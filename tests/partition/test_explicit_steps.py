"""An explicit module (one holding its collectives: what Shardy's or
sdylog's `-sdy-reshard-to-collectives` prints) is taken as written by
`sdylog simulate` and `sdylog run --partition`, not propagated again; but
it still gets what Shardy's partitioner runs after the reshards are written
(partition/pipeline.explicit_steps): its windows sharded along a
permutation factor resolved, its non-divisible shardings padded. Without
them a non-divisible sharding, a window sharded along its window or a
dynamic_update_slice at a dynamic offset on a sharded dimension was refused
("cannot compute the local type ... not divisible"): 21 of 94 of Shardy's
own explicit modules of JAX programs (review r37, F2). Each step leaves a
module needing nothing of it as it is."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir import parse_module
from sdylog.passes import PassContext

# x=4; 13 elements sliced onto 4 devices, negated, gathered back
NON_DIVISIBLE = """module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<13xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<13xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<13xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<13xf32>
    %2 = sdy.all_gather [{"x"}] %1 out_sharding=<@mesh, [{}]> : tensor<13xf32>
    return %2 : tensor<13xf32>
  }
}
"""
# a dilated max pool sharded along its window (what Shardy writes for a
# JAX reduce_window whose input is sharded there)
WINDOW = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<4x7xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x7xf32>
    %2 = sdy.all_gather [{}, {"x"}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<4x7xf32>
    return %2 : tensor<4x7xf32>
  }
}
"""
# one row written at a dynamic offset into rows sharded on x
UPDATE = """module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<1x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_update_slice %arg0, %arg1, %arg2, %c {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %1 = sdy.all_gather [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<16x4xf32>
    return %1 : tensor<16x4xf32>
  }
}
"""
# a reverse along its sharded dimension (convert-global-to-local cannot lower it)
REVERSE = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = stablehlo.reverse %arg0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
    %1 = sdy.all_gather [{"x"}] %0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
"""
# a module needing none of the steps (its collectives and shapes complete)
COMPLETE = NON_DIVISIBLE.replace("13", "16")

STEPS = {"non_divisible": ["sdy-pad-for-divisibility"],
         "window": ["sdy-resolve-permutation-factors", "sdy-reshard-to-collectives", "sdy-pad-for-divisibility"],
         "update": ["sdy-resolve-permutation-factors"],
         "reverse": ["sdy-resolve-permutation-factors", "sdy-reshard-to-collectives"]}
TEXTS = {"non_divisible": NON_DIVISIBLE, "window": WINDOW, "update": UPDATE, "reverse": REVERSE}


def write(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    return path


def note(path, steps: list[str]) -> str:
    return (f"{path}:1:1: note: the module holds its collectives: taken as written, not propagated, but "
            + ", ".join(f"-{s}" for s in steps) + " still changed it")


@pytest.mark.parametrize("halo", ["--halo-exchange", "--no-halo-exchange"])
@pytest.mark.parametrize("name", list(TEXTS))
def test_simulate_takes_it_as_written_and_agrees(name, halo, tmp_path):
    path = write(tmp_path, name, TEXTS[name])
    r = CliRunner().invoke(main, ["simulate", str(path), "--json", halo])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and report["partitioned"] is False, report   # (not propagated)
    assert note(path, []).split(" but ")[0] in r.stderr, r.stderr


@pytest.mark.parametrize("name", list(TEXTS))
def test_run_partition_program_agrees(name, tmp_path):
    """`run --partition`'s per-device program, run on each device with its
    shards of random inputs, gives each device its shard of the global
    result."""
    from sdylog.partition import ir_shardings as irs
    from sdylog.partition.shards import shard_slices
    from sdylog.model.mesh import meshes_of_module
    from sdylog.simulate.mesh import CollectiveStats, DeviceRun, run_on_devices
    from sdylog.simulate.program import DeviceRuntime, Program
    from sdylog.simulate.simulate import random_inputs

    path = write(tmp_path, name, TEXTS[name])
    out = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["run", "--partition", "-q", str(path), "--report", str(out)])
    assert r.exit_code == 0, r.output
    assert note(path, STEPS[name]) in r.stderr, r.stderr
    report = json.loads(out.read_text())
    assert report["explicit"] is True and report["completed_by"] == STEPS[name]

    whole = parse_module(TEXTS[name], "whole.mlir")
    with whole.context:
        func = next(op.operation for op in whole.body.operations if op.operation.name == "func.func")
        inputs = random_inputs(func, 0)
        want = Program(whole, "whole.mlir").run("main", inputs, DeviceRuntime(stats=CollectiveStats()))[0]
        meshes = meshes_of_module(whole)
        (mesh,) = meshes.values()
        args = [irs.func_arg_sharding(func, i) for i in range(len(inputs))]

        def shard(x, s, d):
            return x if s is None or irs.is_replicated(s) else x[shard_slices(x.shape, s, mesh, d)]
        runs = [[DeviceRun("main", [shard(x, s, d) for x, s in zip(inputs, args)]) for d in range(mesh.num_devices)]]
    local = parse_module(r.stdout, "local.mlir")
    with local.context:
        per_device = run_on_devices(Program(local, "local.mlir"), runs)[0]
    for got in per_device:   # (every result is replicated)
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want))


def complete(text: str):
    """The global program partition_module makes of an explicit module
    (its steps, no global-to-local): its text and the steps that changed it."""
    from sdylog.partition.pipeline import partition_module
    module = parse_module(text, "f.mlir")
    done = partition_module(module, PassContext(filename="f.mlir"), global_to_local=False, explicit=True)
    assert done.explicit
    return str(module), done.completed_by


@pytest.mark.parametrize("name", list(TEXTS))
def test_a_completed_module_is_left_as_it_is(name):
    once, steps = complete(TEXTS[name])
    assert steps == STEPS[name]
    twice, steps = complete(once)
    assert steps == [] and twice == once


def test_a_module_needing_nothing_is_left_as_written(tmp_path):
    text, steps = complete(COMPLETE)
    assert steps == [] and text == str(parse_module(COMPLETE, "f.mlir"))
    path = write(tmp_path, "complete", COMPLETE)
    r = CliRunner().invoke(main, ["run", "--partition", "-q", str(path)])
    assert r.exit_code == 0 and "note:" not in r.stderr, r.output
