"""Ops with a custom sharding rule (`sdy.sharding_rule<..., custom>`): JAX's
jnp.linalg / jax.scipy.linalg on CPU, LAPACK custom calls whose rule shares
only the batch factors (`num_batch_dims`). XLA partitions them as
batch-partitionable custom calls: batch dimensions may stay sharded, every
other dimension is replicated, gathered before the call and resliced after
it. The full insert-explicit-reshards does the same (rules/reshard/custom.dl),
so `run --partition` gives each device's call XLA's shapes (checked against
XLA's compiled HLO, linalg_programs.py); it ran each device's call on its
shard of the matrix (a triangular solve with half the rows, exit 0) or was
refused with an unlocated output_operand_alias verifier error. The non-full
version (the export's) leaves them as Shardy does.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from jaxlib.mlir import ir

from sdylog.ir.walk import walk_ops
from sdylog.passes.driver import optimize_text, parse_flags
from tests.jax_subprocess import generated_programs
from tests.run_partition import partitioned

HERE = Path(__file__).parent
FULL = "-sdy-insert-explicit-reshards=enable-full-version=true"
NAMES = ["trisolve_rows", "trisolve_rhs", "trisolve_batch", "cholesky_rows", "cholesky_out", "eigh_rows", "inv_rows",
         "inv_2d", "tridiagonal_rhs"]


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "linalg_programs.py")


def shapes(values) -> list:
    return [list(ir.RankedTensorType(v.type).shape) for v in values]


def custom_calls(module, prefix: str = "") -> list[dict]:
    with module.context:
        return [{"target": ir.StringAttr(op.attributes["call_target_name"]).value,
                 "operand_shapes": shapes(op.operands), "result_shapes": shapes(op.results)}
                for op in walk_ops(module.operation) if op.name == "stablehlo.custom_call"
                and ir.StringAttr(op.attributes["call_target_name"]).value.startswith(prefix)]


def in_order(calls):
    return sorted(calls, key=json.dumps)


@pytest.mark.parametrize("name", NAMES)
def test_each_device_calls_lapack_with_xla_shapes(programs, tmp_path, name):
    xla = programs[name]["xla"]
    assert xla
    module = partitioned(tmp_path, name, programs[name]["mlir"])
    assert in_order(custom_calls(module, "lapack_")) == in_order(xla)


@pytest.mark.parametrize("name", ["trisolve_rows", "cholesky_out"])
def test_the_export_leaves_custom_rule_calls_as_shardy_does(programs, name):
    """-sdy-propagation-pipeline (the non-full insert) writes Shardy's text;
    the full version alone reshards around the call."""
    from tests.passes.passes_oracle import shardy
    text = programs[name]["mlir"]
    got = optimize_text(text, f"{name}.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    assert _without_locations(got) == _without_locations(shardy(text, "sdy-propagation-pipeline"))
    nonfull = optimize_text(got, f"{name}.mlir", parse_flags(["-sdy-insert-explicit-reshards"]))
    assert _without_locations(nonfull) == _without_locations(shardy(got, "sdy-insert-explicit-reshards"))
    full = optimize_text(got, f"{name}.mlir", parse_flags([FULL]))
    assert full.count("sdy.reshard") > got.count("sdy.reshard")


def _without_locations(text: str) -> str:
    return "\n".join(line for line in text.strip().splitlines() if not line.startswith("#loc"))


# A custom call without batch factors: every dimension replicated.
SOLVER = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
    %0 = stablehlo.custom_call @my_solver(%arg0, %arg1) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=8, j=8, k=8, l=4, m=8, n=4}, custom>} : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
"""

# A batch factor i sharded on the operand and the result, a non-batch one (j) on the operand.
BATCHED = """module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["b"=2, "x"=2]>
  func.func public @main(%arg0: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {"x"}, {}]>}) -> (tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}, {}]>}) {
    %0 = stablehlo.custom_call @my_factor(%arg0) {mhlo.frontend_attributes = {num_batch_dims = "1"}, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}, {}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m]) {i=4, j=8, k=8, l=8, m=8}, custom>} : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    return %0 : tensor<4x8x8xf32>
  }
}
"""


def test_the_full_insert_replicates_the_non_batch_factors():
    got = optimize_text(SOLVER, "s.mlir", parse_flags([FULL]))
    assert 'sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<8x8xf32>' in got
    # the result computed whole, then resharded to its own sharding
    assert '<@mesh, [{}, {"x"}]> : tensor<8x4xf32>' in got.split("stablehlo.custom_call")[1]
    got = optimize_text(BATCHED, "b.mlir", parse_flags([FULL]))
    assert 'sdy.reshard %arg0 <@mesh, [{"b"}, {}, {}]> : tensor<4x8x8xf32>' in got
    assert got.count("sdy.reshard") == 1


def test_partitioned_calls_see_whole_matrices(tmp_path):
    (call,) = custom_calls(partitioned(tmp_path, "solver", SOLVER))
    assert call["operand_shapes"] == [[8, 8], [8, 4]] and call["result_shapes"] == [[8, 4]]
    (call,) = custom_calls(partitioned(tmp_path, "batched", BATCHED))
    assert call["operand_shapes"] == [[2, 8, 8]] and call["result_shapes"] == [[2, 8, 8]]


def test_the_non_full_insert_leaves_custom_rule_calls_alone():
    from tests.passes.passes_oracle import shardy
    for text in (SOLVER, BATCHED):
        got = optimize_text(text, "s.mlir", parse_flags(["-sdy-insert-explicit-reshards"]))
        assert "sdy.reshard" not in got
        assert _without_locations(got) == _without_locations(shardy(text, "sdy-insert-explicit-reshards"))


# A custom op sharded along factors all its tensors have (differently): Shardy's
# full version leaves it, and so does ours (its conformance test custom_call.mlir).
SHARED_FACTORS = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y"}]>}) {
  %0 = stablehlo.custom_call @foo(%arg0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=4, j=2}, custom>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)2}, {"y"}]>]>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""


@pytest.mark.parametrize("text", [SOLVER, BATCHED, SHARED_FACTORS])
def test_the_full_insert_departs_from_shardy_only_for_non_batch_factors(text):
    from tests.passes.passes_oracle import shardy
    got = optimize_text(text, "s.mlir", parse_flags([FULL]))
    want = shardy(text, "sdy-insert-explicit-reshards{enable-full-version=true}")
    assert "(%arg0" in want.split("stablehlo.custom_call")[1]   # Shardy: on the argument as it is
    assert (got == want) == (text is SHARED_FACTORS)


def test_convert_alone_refuses_a_call_sharded_along_a_non_batch_factor():
    """Without the full insert before it, convert-global-to-local meets the
    reshards the call still needs: an error at the call (it made the local
    call on half the rows, exit 0)."""
    from sdylog.ir.diagnostics import SdylogError
    with pytest.raises(SdylogError) as e:
        optimize_text(SOLVER, "s.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    assert str(e.value).startswith("s.mlir:4:10: error: 'stablehlo.custom_call' op has operand 0 sharded along factor i")


@pytest.mark.parametrize("name", ["trisolve_rows", "trisolve_rhs", "trisolve_batch", "cholesky_rows", "cholesky_out"])
def test_simulate_runs_the_partitioned_calls(programs, name):
    """Each device's potrf/trsm on whole matrices gives its shard of the
    unpartitioned run (the simulator runs them: sdylog/simulate/ops/lapack.py)."""
    from sdylog.simulate.simulate import simulate_text
    report = simulate_text(programs[name]["mlir"], f"{name}.py")
    assert report.partitioned and report.ok, report.difference
