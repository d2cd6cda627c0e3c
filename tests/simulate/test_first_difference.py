"""`sdylog simulate` names the first op whose per-device values differ from
the unpartitioned run, behind a reshard too: the reshard's index arithmetic
(an offset looked up by partition id, reshaped to a scalar) carries the
reshard's location but is no value of it (sdylog/simulate/trace.py)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sdylog.cli import main


def _convert_without_its_check(monkeypatch):
    """convert-global-to-local as if it did not look for what the module
    still needs: what simulate says of a wrong per-device program."""
    from sdylog.passes import convert_global_to_local
    monkeypatch.setattr(convert_global_to_local, "_left_to_reshard", lambda module, ctx, ops: (None, None))


def _simulate(tmp_path, text, name):
    path = tmp_path / name
    path.write_text(text)
    r = CliRunner().invoke(main, ["simulate", "--as-written", "--json", str(path)])
    assert r.exit_code == 1, r.output
    return json.loads(r.stdout)


# A slice to "x" then a sum over the sliced dimension with no all_reduce.
MISSING_ALL_REDUCE = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
  %0 = sdy.all_slice [{"x"}] %a out_sharding=<@mesh, [{"x"}]> : tensor<8xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}"""


def test_names_the_reduce_missing_its_all_reduce_after_a_reshard(tmp_path, monkeypatch):
    _convert_without_its_check(monkeypatch)
    diff = _simulate(tmp_path, MISSING_ALL_REDUCE, "sum.mlir")["first_difference"]
    assert diff["op"] == "stablehlo.reduce" and diff["location"] == f"{tmp_path}/sum.mlir:5:24", diff
    assert diff["reason"] == ('each device holds a partial sum over {"x"} that is never reduced '
                              '(an all_reduce is missing)')
    assert diff["devices"] == [0, 1, 2, 3] and 0 < diff["max_abs_error"] < float("inf")


# m37d's grouped convolution's shapes: the input sliced over {"x", "y"}
# (a reshard: two dynamic_slices, the offset and the data), then a
# convolution that reads the slices of {"y", "x"} as those of {"x", "y"},
# gathered after. With N = 4 the slices are padded (4 over 8 devices).
CONV = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<1x2xNxf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %b: tensor<1x1x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>})
    -> (tensor<2xNx4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
  %l = sdy.all_slice [{}, {}, {AXES}] %a out_sharding=<@mesh, [{}, {}, {AXES}]> : tensor<1x2xNxf32>
  %r = stablehlo.convolution(%l, %b) dim_numbers = [f, 0, b]x[i, 0, o]->[0, b, f], window = {stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x", "y"}, {}]>]>} : (tensor<1x2xNxf32>, tensor<1x1x4xf32>) -> tensor<2xNx4xf32>
  %g = sdy.all_gather [{}, {"x", "y"}, {}] %r out_sharding=<@mesh, [{}, {}, {}]> : tensor<2xNx4xf32>
  return %g : tensor<2xNx4xf32>
}"""


@pytest.mark.parametrize("n", [8, 4])   # (4: padded to a block of 1 on each of 8 devices)
def test_conv_program_is_right_as_written(tmp_path, n):
    path = tmp_path / "conv.mlir"
    path.write_text(CONV.replace("AXES", '"x", "y"').replace("xNx", f"x{n}x"))
    r = CliRunner().invoke(main, ["simulate", "--as-written", str(path)])
    assert r.exit_code == 0 and "PASS" in r.output, r.output


@pytest.mark.parametrize("n", [8, 4])
def test_names_the_conv_after_a_reshard_not_its_offset(tmp_path, monkeypatch, n):
    _convert_without_its_check(monkeypatch)
    report = _simulate(tmp_path, CONV.replace("AXES", '"y", "x"').replace("xNx", f"x{n}x"), "conv.mlir")
    diff = report["first_difference"]
    assert diff["op"] == "stablehlo.convolution" and diff["location"] == f"{tmp_path}/conv.mlir:5:8", diff
    assert diff["result"] == 0 and diff["max_abs_error"] == report["max_abs_error"] < float("inf")
    assert diff["reason"].startswith("shards read out of place (device 1 has device 4's"), diff


def test_a_record_of_another_shape_is_never_compared():
    """An op whose per-device records all have other shapes than its local
    ones (an offset, a scalar index) is not compared: no difference, rather
    than one of infinite error."""
    import numpy as np

    from sdylog.simulate.trace import Traced, Tracer, first_difference
    ref, dev = Tracer(), Tracer()
    ref.records[(0, 0, 0)] = Traced(0, 0, "sdy.sharding_constraint", [np.ones((1, 2, 4), np.float32)], [None], None)
    for d in range(2):
        dev.records[(d, 0, 0)] = Traced(0, 0, "stablehlo.dynamic_slice", [np.array([d], np.int64)], [None], None)
        dev.records[(d, 0, 1)] = Traced(1, 1, "stablehlo.reshape", [np.array(d, np.int64)], [None], None)

    def close(got, want):
        return bool(np.array_equal(got, want)), float(np.max(np.abs(got - want)))
    assert first_difference(ref, dev, 2, {}, close) is None
    dev.records[(0, 0, 2)] = dev.records[(1, 0, 2)] = Traced(2, 2, "stablehlo.dynamic_slice",
                                                             [np.zeros((1, 2, 4), np.float32)], [None], None)
    diff = first_difference(ref, dev, 2, {}, close)
    assert (diff.op, diff.devices, diff.max_abs_error) == ("sdy.sharding_constraint", (0, 1), 1.0)
