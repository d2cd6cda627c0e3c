"""-sdy-convert-global-to-local on a module that still needs reshards or
collectives (rules/reshard/errors.dl, unlowered): an error at the op, no
output; the same module through the partitioner's passes converts."""
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

# A dot on one device (a maximal mesh) whose operands are sharded on another
# mesh: made local as it stands, device 0 would sum its half only
# (/work/rev29/r3/gm3.mlir).
SINGLE_DEVICE_DOT = """sdy.mesh @g = <["a"=2]>
sdy.mesh @b = <["y"=2]>
sdy.mesh @m = <[], device_ids=[0]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>}, %y: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
# A dot whose contracting dimension is sharded and no all-reduce after it: a partial sum.
PARTIAL_DOT = """sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}, %y: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@b, []>]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
# An elementwise op whose operand and result are sharded on other axes of the
# same size: the local types agree, the shards do not.
OTHER_AXES = """sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>}) {
  %0 = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@b, [{"y"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
# The dot of PARTIAL_DOT with its all-reduce: nothing missing.
REDUCED_DOT = """sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}, %y: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@b, []>]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@b, []> : tensor<f32>
  return %1 : tensor<f32>
}"""


@pytest.mark.parametrize("text,message", [
    (SINGLE_DEVICE_DOT, "t.mlir:5:8: error: 'stablehlo.dot_general' op needs a reshard of operand 0 before "
                        "convert-global-to-local"),
    (PARTIAL_DOT, "t.mlir:3:8: error: 'stablehlo.dot_general' op needs an all-reduce of result 0 before "
                  "convert-global-to-local"),
    (OTHER_AXES, "t.mlir:3:8: error: 'stablehlo.negate' op needs a reshard of result 0 before "
                 "convert-global-to-local"),
])
def test_convert_alone_refuses_a_module_that_needs_reshards(text, message):
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(CONVERT))
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("text", [SINGLE_DEVICE_DOT, PARTIAL_DOT, OTHER_AXES])
def test_the_partitioner_passes_make_it_convert(text):
    out = optimize_text(text, "t.mlir", parse_flags(PARTITION))
    assert "stablehlo.all_reduce" in out or "stablehlo.all_gather" in out or "collective_permute" in out


def test_a_module_with_its_all_reduce_converts():
    out = optimize_text(REDUCED_DOT, "t.mlir", parse_flags(CONVERT))
    assert "stablehlo.all_reduce" in out and "tensor<4xf32>" in out


def test_cli_error_and_no_output(tmp_path):
    path = tmp_path / "gm3.mlir"
    path.write_text(SINGLE_DEVICE_DOT)
    out = tmp_path / "out.mlir"
    r = CliRunner().invoke(main, ["opt", str(path), "-sdy-convert-global-to-local", "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert f"{path}:5:8: error: 'stablehlo.dot_general' op needs a reshard" in r.output
    assert not out.exists()


@pytest.mark.parametrize("text,where", [(PARTIAL_DOT, "t.mlir:3:8"), (OTHER_AXES, "t.mlir:3:8")])
def test_simulate_as_written_reports_the_missing_reshard(text, where):
    with pytest.raises(SdylogError) as e:
        simulate_text(text, "t.mlir", seed=1, explicit=True)
    assert str(e.value).startswith(f"{where}: error:") and "before convert-global-to-local" in str(e.value)
    assert simulate_text(text, "t.mlir", seed=1).ok   # (propagated and partitioned, it runs)


# PARTIAL_DOT before propagation: the propagation pipeline's export runs the
# non-full insert-explicit-reshards, which leaves the all-reduce out
# (/work/rev30/r1/c/partial_dot.mlir).
UNPROPAGATED_DOT = """sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}, %y: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
DOT_ERROR = "error: 'stablehlo.dot_general' op needs an all-reduce of result 0 before"


@pytest.mark.parametrize("before", [
    ["--sdy-propagation-pipeline"],
    ["--sdy-insert-explicit-reshards"],
])
def test_in_one_run_a_non_full_insert_does_not_excuse(before):
    """In one run as in two: the check is skipped only after the full
    insert-explicit-reshards left the module as it is."""
    saved = optimize_text(UNPROPAGATED_DOT, "t.mlir", parse_flags(before))
    for text, flags in ((UNPROPAGATED_DOT, before + CONVERT), (saved, CONVERT)):
        with pytest.raises(SdylogError) as e:
            optimize_text(text, "t.mlir", parse_flags(flags))
        assert DOT_ERROR in str(e.value)


def test_in_one_run_the_full_insert_excuses_its_module():
    """After the full insert-explicit-reshards, convert takes its hand-over:
    the all-reduce it inserted makes the dot right."""
    out = optimize_text(UNPROPAGATED_DOT, "t.mlir", parse_flags(
        ["--sdy-propagation-pipeline", "--sdy-insert-explicit-reshards=enable-full-version=true",
         "--sdy-reshard-to-collectives"] + CONVERT))
    assert "stablehlo.all_reduce" in out


# A manual computation whose body returns its block argument as it is
# (/work/rev30/r1/e2/mc2.mlir): the return's operand was read before the
# argument's uses were replaced, and freed with the op (a segfault).
RETURNS_ITS_ARGUMENT = """sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{"a"}]>] out_shardings=[<@m, [{"a"}]>] manual_axes={"a"} (%arg1: tensor<4xf32>) {
    sdy.return %arg1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}"""


def test_a_manual_computation_returning_its_argument_converts():
    out = optimize_text(RETURNS_ITS_ARGUMENT, "t.mlir", parse_flags(CONVERT))
    assert "return %arg0 : tensor<4xf32>" in out and "manual_computation" not in out
    assert simulate_text(RETURNS_ITS_ARGUMENT, "t.mlir", explicit=True).ok


# A dot with its contracting dimension sharded and an all-reduce after it
# that does not make it right (/work/rev30/r1/b): over another axis, over
# part of the axes, and not the result's only use (returned as it is too).
# Shardy's convert aborts on each.
_DOT_THEN = """sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@b, [{{{axes}}}]>}}, %y: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@b, [{{{axes}}}]>}}) -> {results} {{
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] {{sdy.sharding = #sdy.sharding_per_value<[<@b, []>]>}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  %1 = sdy.all_reduce {{{reduced}}} %0 out_sharding=<@b, []> : tensor<f32>
  return {returned}
}}"""


def _dot_then(axes, reduced, returned="%1 : tensor<f32>", results="tensor<f32>"):
    return _DOT_THEN.format(axes=axes, reduced=reduced, returned=returned, results=results)


@pytest.mark.parametrize("text", [
    _dot_then('"x"', '"y"'),
    _dot_then('"x", "y"', '"x"'),
    _dot_then('"x"', '"x"', "%1, %0 : tensor<f32>, tensor<f32>", "(tensor<f32>, tensor<f32>)"),
])
def test_an_all_reduce_that_does_not_make_the_dot_right_is_refused(text):
    with pytest.raises(SdylogError) as e:
        optimize_text(text, "t.mlir", parse_flags(CONVERT))
    assert str(e.value).startswith("t.mlir:3:8: error: 'stablehlo.dot_general' op needs an all-reduce of result 0 "
                                   "before convert-global-to-local")


@pytest.mark.parametrize("axes", ['"x"', '"x", "y"'])
def test_an_all_reduce_over_the_contracted_axes_converts(axes):
    text = _dot_then(axes, axes)
    out = optimize_text(text, "t.mlir", parse_flags(CONVERT))
    assert "stablehlo.all_reduce" in out
    assert simulate_text(text, "t.mlir", explicit=True).ok


# A reverse along its sharded dimension (/work/rev30/r1/b/reverse_plain.mlir):
# no offsets make its shards, whatever the insert pass did (Shardy's convert
# takes it and makes a wrong program).
REVERSE = """sdy.mesh @b = <["x"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}]>}) {
  %0 = stablehlo.reverse %x, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@b, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""


def test_a_reverse_along_a_sharded_dimension_is_refused():
    with pytest.raises(SdylogError) as e:
        optimize_text(REVERSE, "t.mlir", parse_flags(CONVERT))
    assert str(e.value).startswith("t.mlir:3:8: error: 'stablehlo.reverse' op is sharded along dimension 0 of "
                                   "operand 0, a dimension it permutes")


def test_a_reverse_along_a_replicated_dimension_converts():
    text = REVERSE.replace("tensor<8xf32>", "tensor<8x4xf32>").replace('[{"x"}]', '[{}, {"x"}]')
    out = optimize_text(text, "t.mlir", parse_flags(CONVERT))
    assert "stablehlo.reverse %arg0, dims = [0]" in out and "tensor<8x2xf32>" in out
    assert simulate_text(text, "t.mlir", explicit=True).ok


def test_the_offsets_kinds_are_converts_own():
    """errors.dl's offsets_kind names ops convert-global-to-local gives offsets itself."""
    import re

    from sdylog import RULES_DIR
    from sdylog.passes.convert_global_to_local import _SPECIAL
    kinds = re.findall(r'^offsets_kind\("([^"]+)"\)\.', (RULES_DIR / "reshard" / "errors.dl").read_text(), re.M)
    assert kinds and set(kinds) <= _SPECIAL
