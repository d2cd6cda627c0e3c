"""A `sdy.func_data_flow_edge` whose operand is neither a function's argument
nor a call's result (here: input that already holds the edges, so the import
puts a second edge under each): a located error, as Shardy's verifier gives,
not an internal error."""
from __future__ import annotations

import subprocess
import sys

EDGES_ALREADY = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func private @f(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x2xi32>
  return %0 : tensor<8x2xi32>
}
func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x2xi32> {
  %0 = call @f(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
  %1 = sdy.func_data_flow_edge %0 : tensor<8x2xi32>
  return %1 : tensor<8x2xi32>
}
"""


def sdylog_opt(path, *flags):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", "opt", str(path), *flags], capture_output=True, text=True)


def test_edge_on_an_edge_is_a_located_error(tmp_path):
    path = tmp_path / "edges.mlir"
    path.write_text(EDGES_ALREADY)
    run = sdylog_opt(path, "-sdy-propagation-pipeline")
    assert run.returncode == 1, run.stderr
    assert run.stdout == ""
    assert f"{path}:4:8: error: 'sdy.func_data_flow_edge' op expected operand of sdy.func_data_flow_edge " \
           "to be a result of call op" in run.stderr
    assert "internal error" not in run.stderr


def test_edges_already_there_propagate(tmp_path):
    # Without the import adding edges, the same input propagates (as Shardy's -sdy-basic-propagate does).
    path = tmp_path / "edges.mlir"
    path.write_text(EDGES_ALREADY)
    run = sdylog_opt(path, "-sdy-basic-propagate")
    assert run.returncode == 0, run.stderr
    assert '%0 = sdy.func_data_flow_edge %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>}' \
        in run.stdout
