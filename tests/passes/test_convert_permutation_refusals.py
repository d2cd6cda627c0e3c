"""-sdy-convert-global-to-local refuses what it would make wrong along a
permutation factor (/work/rev31 REPORT.md section 4b): a reverse along a
sharded dimension after the full insert-explicit-reshards in the same run
(its hand-over excuses the other needs, not this one), and a convolution
sharded along a spatial dimension whose window is more than one element."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

ONE_RUN = ["--sdy-propagation-pipeline", "--sdy-insert-explicit-reshards=enable-full-version=true",
           "--sdy-reshard-to-collectives", "--sdy-convert-global-to-local"]

# /work/rev31/rev_perm.mlir
REVERSE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.reverse %arg0, dims = [0] : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
REVERSE_ERROR = ("t.mlir:3:8: error: 'stablehlo.reverse' op is sharded along dimension 0 of operand 0, a dimension "
                 "it permutes")
# /work/rev31/conv_perm.mlir: window 3, padding 1, spatial dimension sharded on "x".
CONV = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<1x8x1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}, %arg1: tensor<3x1x1xf32>) -> tensor<1x8x1xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x1xf32>, tensor<3x1x1xf32>) -> tensor<1x8x1xf32>
  return %0 : tensor<1x8x1xf32>
}"""
CONV_ERROR = "error: In op stablehlo.convolution dimension 1 is sharded but is not a pass-through dimension."
# A window of one element: each device's convolution is its shard's.
CONV_1x1 = CONV.replace("3x1x1xf32", "1x1x1xf32").replace("pad = [[1, 1]]", "pad = [[0, 0]]")


def test_a_reverse_after_the_full_insert_in_one_run_is_refused():
    with pytest.raises(SdylogError) as e:
        optimize_text(REVERSE, "t.mlir", parse_flags(ONE_RUN))
    assert str(e.value).startswith(REVERSE_ERROR)


def test_the_same_in_two_runs():
    saved = optimize_text(REVERSE, "t.mlir", parse_flags(ONE_RUN[:-1]))
    with pytest.raises(SdylogError) as e:
        optimize_text(saved, "t.mlir", parse_flags(ONE_RUN[-1:]))
    assert "'stablehlo.reverse' op is sharded along dimension 0" in str(e.value)


def test_the_cli_reports_it_and_writes_nothing(tmp_path):
    f = tmp_path / "t.mlir"
    f.write_text(REVERSE)
    r = CliRunner().invoke(main, ["opt", str(f), *ONE_RUN])
    assert r.exit_code != 0
    assert "'stablehlo.reverse' op is sharded along dimension 0 of operand 0" in r.output
    assert "func.func" not in r.output


@pytest.mark.parametrize("flags", [ONE_RUN, ONE_RUN[-1:]], ids=["one_run", "convert_alone"])
def test_a_convolution_sharded_along_its_window_is_refused(flags):
    text = CONV if len(flags) > 1 else optimize_text(CONV, "t.mlir", parse_flags(ONE_RUN[:-1]))
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(flags))
    assert str(e.value).startswith("t.mlir:") and CONV_ERROR in str(e.value)


def test_a_convolution_of_a_one_element_window_converts():
    out = optimize_text(CONV_1x1, "t.mlir", parse_flags(ONE_RUN))
    assert "tensor<1x4x1xf32>" in out
    assert simulate_text(CONV_1x1, "t.mlir", pipeline=ONE_RUN[:-1]).ok


@pytest.mark.parametrize("text", [REVERSE, CONV])
def test_the_default_pipeline_computes_the_global_result(text):
    assert simulate_text(text, "t.mlir", seed=2).ok
