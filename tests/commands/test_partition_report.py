"""`sdylog run FILE --partition --report r.json` (r34 G3): the report's values
read as without --partition (global shapes, the shardings propagation gave
the entry function's arguments and results), while the module printed is the
per-device one. They were read from the partitioned module: arguments and
results had `"sharding": null`, results their per-device shapes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sdylog.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"

# results sharded over both axes: their per-device shape differs from the global one
TWO_AXES = """sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>},
                       %arg1: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<8xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<16x8xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1 : tensor<16x8xf32>, tensor<8xf32>
}
"""


def report(path, tmp_path, *flags):
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["run", str(path), *flags, "--report", str(out)])
    assert r.exit_code == 0, r.output
    return r.stdout, json.loads(out.read_text())


@pytest.mark.parametrize("name", ["mlp", "two_axes"])
def test_partitioned_report_values_are_the_global_ones(name, tmp_path):
    path = EXAMPLES / "mlp.mlir"
    if name == "two_axes":
        path = tmp_path / "two_axes.mlir"
        path.write_text(TWO_AXES)
    propagated, whole = report(path, tmp_path)
    local, partitioned = report(path, tmp_path, "--partition")
    assert partitioned["values"] == whole["values"]
    for key in ("sharded", "unsharded", "conflicts"):
        assert partitioned[key] == whole[key], key
    entry = {v["mlir_name"]: v for v in partitioned["values"]
             if v["mlir_name"] in ("@main:%arg0", "@main:%arg1", "@main:result0")}
    assert len(entry) == 3 and all(v["sharding"] is not None for v in entry.values()), entry
    assert "sdy.sharding" in propagated and "sdy.sharding" not in local   # the module printed: per device
    if name == "two_axes":
        assert entry["@main:result0"]["shape"] == [16, 8]
        assert entry["@main:result0"]["sharding"] == '<@mesh, [{"data"}, {"model"}]>'
        assert "-> (tensor<4x4xf32>, tensor<4xf32>)" in local
