"""The cross-device edge count (`sdylog mpmd`'s summary, the manifest's
`cross_device_edges`, rules/mpmd/transfers.dl cross_edge and cross_result):
each operand, or function result, read on a device from a received copy.
The ops inside a reduce's body run with the reduce: the values they read
there (its block arguments) are no cross-device edge (rev35 H3, where every
reduce body counted two)."""
import json
import re
from pathlib import Path

from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.diagnostics import SdylogError
from tests.mpmd.helpers import functions, partition

GPIPE = (Path(__file__).parent / "data" / "pipeline_gpipe.mlir").read_text()

# Two calls of a function whose body is a reduce, and one of another.
TWO_CALLS = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<f32>, tensor<f32>) {
    %0 = call @f(%arg0) : (tensor<4xf32>) -> tensor<f32>
    %1 = call @f(%arg1) : (tensor<4xf32>) -> tensor<f32>
    %2 = call @g(%0, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %2, %0 : tensor<f32>, tensor<f32>
  }
  func.func private @f(%arg0: tensor<4xf32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @g(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<f32>
    %1 = stablehlo.add %0, %arg0 : tensor<f32>
    return %1 : tensor<f32>
  }
}
"""


def received_reads(text: str) -> int:
    """Reads of received values in the per-device programs: each use of a
    recv's data result (by an op or the return)."""
    n = 0
    for body in functions(text).values():
        for name in re.findall(r"(%\w+):2 = \"stablehlo.recv\"", body):
            n += len(re.findall(re.escape(name) + r"#0\b", body))
    return n


def check(text: str, assign=(), edges=None, transfers=None):
    part = partition(text, assign=assign, devices=2)
    stats = part.plan.stats
    assert stats["cross_edges"] == received_reads(part.text()) == part.manifest()["cross_device_edges"]
    assert (stats["cross_edges"], stats["transfers"]) == (edges, transfers)


def test_one_device_pipeline_has_no_cross_edge():
    check(GPIPE, edges=0, transfers=0)
    check(GPIPE, assign=(("stage0_fwd", 0),), edges=0, transfers=0)


def test_two_stage_pipeline_counts_the_reads_of_received_values():
    # each stage-0 forward result is read 3 times on device 1 (stage1_fwd's dot, stage1_bwd's two
    # dots), each stage1_bwd input gradient once on device 0 (stage0_bwd's multiply)
    stages = (("stage0_fwd", 0), ("stage1_fwd", 1), ("stage1_bwd", 1), ("stage0_bwd", 0))
    check(GPIPE, assign=stages, edges=8, transfers=4)


def test_two_calls_of_a_reduce():
    check(TWO_CALLS, edges=0, transfers=0)
    # @g, on device 1, reads the first reduce twice and the second once
    check(TWO_CALLS, assign=(("f", 0), ("g", 1)), edges=3, transfers=2)


def test_cli_summary_and_manifest(tmp_path):
    src, man = tmp_path / "gpipe.mlir", tmp_path / "m.json"
    src.write_text(GPIPE)
    r = CliRunner().invoke(main, ["mpmd", str(src), "--devices", "2", "--assign", "stage0_fwd@0",
                                  "--json", str(man), "-o", str(tmp_path / "out.mlir")])
    assert r.exit_code == 0, r.output
    assert "cross-device edges: 0, transfers: 0" in r.output
    assert json.loads(man.read_text())["cross_device_edges"] == 0


def test_a_constraint_to_another_device_inside_a_reduce_body_is_an_error():
    text = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<f32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      %c = sdy.sharding_constraint %s <@maximal_mesh_1, []> : tensor<f32>
      stablehlo.return %c : tensor<f32>
    }
    return %0 : tensor<f32>
  }
}
"""
    try:
        partition(text)
    except SdylogError as e:
        msg = str(e)
    else:
        raise AssertionError("partitioned")
    assert "t.mlir:9:12" in msg and "'sdy.sharding_constraint' is placed on device 1 but the 'stablehlo.reduce' " \
        "holding it (t.mlir:6:" in msg and "runs on device 0" in msg
