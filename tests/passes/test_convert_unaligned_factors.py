"""-sdy-convert-global-to-local on an op sharded along a pass-through factor
that one of its tensors lacks, where that is no broadcast
(rules/reshard/errors.dl, unlowered_unaligned): a reshape whose dimensions do
not split into common factors. No insert pass reshards it (Shardy's neither),
so the local reshape would mix shards (/work/rev31/reshape_bad.mlir: a 4x3
block reshaped to 3x8): an error at the op, no output. Broadcasts, dots and
reshapes sharded along a factor all their tensors have still convert. The
partitioner pipeline's -sdy-resolve-permutation-factors replicates such a
reshape's group (misaligned_reshape_group): it gets a per-device program."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

CONVERT = ["--sdy-convert-global-to-local"]
PARTITION = ["--sdy-insert-explicit-reshards=enable-full-version=true", "--sdy-reshard-to-collectives",
             "--sdy-pad-for-divisibility", "--sdy-resolve-single-device-sharding", "--sdy-convert-global-to-local"]
FULL_THEN_CONVERT = ["--sdy-insert-explicit-reshards=enable-full-version=true", "--sdy-convert-global-to-local"]
PIPELINE = ["--sdy-partitioner-pipeline"]

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'


def reshape(in_shape: str, out_shape: str, in_dims: str, out_dims: str) -> str:
    return MESH + f"""func.func @main(%arg0: tensor<{in_shape}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{in_dims}]>}}) -> (tensor<{out_shape}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{out_dims}]>}}) {{
  %0 = stablehlo.reshape %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{out_dims}]>]>}} : (tensor<{in_shape}xf32>) -> tensor<{out_shape}xf32>
  return %0 : tensor<{out_shape}xf32>
}}"""


# ([ij, m])->([ik, l]) {i=2, j=8, k=3, l=8, m=3}: "y" on j, which the result lacks.
OPERAND_ONLY = reshape("16x3", "6x8", '{"x", "y"}, {}', '{"x"}, {}')
# ([i, j])->([k, l]) {i=8, j=3, k=3, l=8}: "y" on i; the full insert writes nothing.
NOTHING_WRITTEN = reshape("8x3", "3x8", '{"y"}, {}', "{}, {}")
# The result sharded along l, which the operand lacks (no broadcast: the same
# elements, split otherwise).
RESULT_ONLY = reshape("16x3", "6x8", '{"x"}, {}', '{"x"}, {"y"}')


@pytest.mark.parametrize("text,flags,message", [
    (OPERAND_ONLY, CONVERT, "t.mlir:3:8: error: 'stablehlo.reshape' op has operand 0 sharded along factor j of its "
                            "sharding rule, which result 0 does not have"),
    (OPERAND_ONLY, PARTITION, "t.mlir:3:8: error: 'stablehlo.reshape' op has operand 0 sharded along factor j"),
    (NOTHING_WRITTEN, FULL_THEN_CONVERT, "t.mlir:3:8: error: 'stablehlo.reshape' op has operand 0 sharded along "
                                         "factor i of its sharding rule, which result 0 does not have"),
    (RESULT_ONLY, CONVERT, "t.mlir:3:8: error: 'stablehlo.reshape' op has result 0 sharded along factor l of its "
                           "sharding rule, which operand 0 does not have"),
])
def test_a_reshape_sharded_along_a_factor_a_tensor_lacks_is_refused(text, flags, message):
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(flags))
    assert str(e.value).startswith(message), str(e.value)


# (were refused by the pipeline too, before it replicated misaligned reshape groups)
@pytest.mark.parametrize("text", [OPERAND_ONLY, NOTHING_WRITTEN])
def test_the_partitioner_pipeline_replicates_them(text):
    assert "stablehlo.reshape" in optimize_text(text, "t.mlir", parse_flags(PIPELINE))
    report = simulate_text(text, "t.mlir")
    assert report.partitioned and report.ok, report.difference


def test_cli_error_and_no_output(tmp_path):
    path = tmp_path / "reshape_bad.mlir"
    path.write_text(OPERAND_ONLY)
    r = CliRunner().invoke(main, ["opt", str(path), *PARTITION])
    assert r.exit_code == 1
    assert "reshape_bad.mlir:3:8: error: 'stablehlo.reshape' op has operand 0 sharded along factor j" in r.output
    assert "does not verify" not in r.output and "func.func" not in r.output


@pytest.mark.parametrize("text,local", [
    # ([ij, m])->([ik, l]) sharded along i only, which every tensor has.
    (reshape("16x3", "6x8", '{"x"}, {}', '{"x"}, {}'), "tensor<3x8xf32>"),
    # 16x3 to 2x8x3: ([ij, k])->([i, j, k]), "y" on j in both.
    (reshape("16x3", "2x8x3", '{"x", "y"}, {}', '{"x"}, {"y"}, {}'), "tensor<1x4x3xf32>"),
    # A broadcast sharded along the dimension it adds: ([j])->([i, j]).
    (MESH + """func.func @main(%arg0: tensor<4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}""", "tensor<4x4xf32>"),
    # A dot sharded along its lhs-only factor: ([i, k], [k, j])->([i, j]), "x" on i.
    (MESH + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4x6xf32>) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}""", "tensor<4x6xf32>"),
])
def test_ops_sharded_along_factors_that_line_up_convert(text, local):
    for flags in (CONVERT, PARTITION):
        out = optimize_text(text, "t.mlir", parse_flags(flags))
        assert local in out, out
