"""Top-k along a sharded dimension (topk_programs.py), partitioned and
simulated equal to the unpartitioned run. ApproxTopK's rule has the reduced
dimension as a factor of its operands only (([i, j], [i, j], [], [])->([i,
k], [i, k])), which the full insert-explicit-reshards, as Shardy's, leaves
sharded: resolve-permutation-factors gathers it before the call
(rules/partition/permutation.dl, operand_only_factor), so that each device
picks its top k among whole rows (XLA moves those axes onto the rows with
an all-to-all, then sorts whole rows).

A top-k that keeps every element (k the dimension's size, or an ApproxTopK
not aggregated to top k) has, in Shardy's rules as in sdylog's, a
pass-through factor on the sorted dimension, which each device sorted
alone: resolve-permutation-factors now gathers the dimension a top-k
sorts on all its tensors (sorted_dim), whatever its rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from sdylog.simulate.simulate import simulate_text
from tests.jax_subprocess import generated_programs
from tests.run_partition import partitioned

HERE = Path(__file__).parent
NAMES = ["approx_max_k", "approx_max_k_indices", "approx_min_k_all_axes", "approx_max_k_dim0", "approx_max_k_3d",
         "approx_max_k_recall", "approx_max_k_grad", "top_k", "top_k_3d", "top_k_grad", "top_k_all",
         "approx_max_k_all", "approx_max_k_not_aggregated"]


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "topk_programs.py")


def test_every_program_is_tested(programs):
    assert sorted(programs) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_simulated_equal(programs, name):
    report = simulate_text(programs[name], f"{name}.mlir")
    assert report.partitioned
    assert report.ok, report.difference


def test_each_device_sorts_whole_rows(programs, tmp_path):
    """Issue 18's program: each device's ApproxTopK reads its 2 rows whole
    (64 columns, gathered over model), and gives its 2 rows' top 4."""
    module = partitioned(tmp_path, "approx_max_k", programs["approx_max_k"])
    main = next(op for op in module.body.operations if op.attributes["sym_name"].value == "main")
    calls = [op for op in main.regions[0].blocks[0].operations if op.name == "stablehlo.custom_call"]
    assert len(calls) == 1
    assert [str(v.type) for v in calls[0].operands[:2]] == ["tensor<2x64xf32>", "tensor<2x64xi32>"]
    assert str(calls[0].results[0].type) == "tensor<2x4xf32>"


# An ApproxTopK not aggregated to top k (its result keeps all 16 columns),
# sorting columns sharded on "x", its reduction_dim counted from the end.
NEGATIVE_REDUCTION_DIM = """sdy.mesh @mesh = <["x"=2]>
func.func private @gt(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main(%x: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<4x16xf32> {
  %iota = stablehlo.iota dim = 1 : tensor<4x16xi32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %none = stablehlo.constant dense<-1> : tensor<i32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %none) {called_computations = [@gt],
      mhlo.backend_config = {aggregate_to_topk = false, recall_target = 0.95 : f32, reduction_dim = -1 : i64,
                             reduction_input_size_override = -1 : i64, top_k = 16 : i64}}
    : (tensor<4x16xf32>, tensor<4x16xi32>, tensor<f32>, tensor<i32>) -> (tensor<4x16xf32>, tensor<4x16xi32>)
  return %0#0 : tensor<4x16xf32>
}
"""


def test_a_reduction_dim_counted_from_the_end_is_gathered_too():
    """reduction_dim = -1 is the last dimension for the partitioner as for
    the simulator (sdylog.ir.op_properties.reduction_dim): each device sorts
    whole rows."""
    report = simulate_text(NEGATIVE_REDUCTION_DIM, "t.mlir")
    assert report.partitioned
    assert report.ok, report.difference
