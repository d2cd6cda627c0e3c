"""`sdylog run FILE --partition` on an explicit module (one that holds its
collectives already: what `sdylog opt -sdy-propagation-pipeline
-sdy-insert-explicit-reshards=enable-full-version=true` prints): taken as
written, as `sdylog simulate` takes it, only made local and costed. It was
propagated and given its reshards again: a second all_reduce after the
written one, each device's sum 8 times the whole on 8 devices (exit 0)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from sdylog.cli import main

MESH = """module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<f32> {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
"""
# the sum, its all_reduce written (explicit)
EXPLICIT = MESH + """    %2 = sdy.all_reduce {"data", "model"} %1 out_sharding=<@mesh, []> : tensor<f32>
    return %2 : tensor<f32>
  }
}
"""
# the same sum without it (propagated and partitioned)
IMPLICIT = MESH + """    return %1 : tensor<f32>
  }
}
"""


def run(path, *flags):
    r = CliRunner().invoke(main, ["run", str(path), "--partition", *flags])
    return r


def per_device_results(text: str, x: np.ndarray) -> list:
    """The per-device program run on the 8 devices of the mesh (data=4,
    model=2, devices in mesh order), each given its shard of x."""
    from sdylog.ir import parse_module
    from sdylog.simulate.mesh import DeviceRun, run_on_devices
    from sdylog.simulate.program import Program
    module = parse_module(text, "local.mlir")
    with module.context:
        runs = [[DeviceRun("main", [x[4 * (d // 2):4 * (d // 2 + 1), 4 * (d % 2):4 * (d % 2 + 1)]])
                 for d in range(8)]]
        return [r[0] for r in run_on_devices(Program(module, "local.mlir"), runs)[0]]


@pytest.mark.parametrize("text", [EXPLICIT, IMPLICIT], ids=["explicit", "implicit"])
def test_the_per_device_program_sums_once(text, tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(text)
    r = run(path, "-q")
    assert r.exit_code == 0, r.output
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    for got in per_device_results(r.stdout, x):
        np.testing.assert_allclose(np.asarray(got), x.sum(), rtol=1e-6)
    assert r.stdout.count('"stablehlo.all_reduce"') == 1, r.stdout


def test_explicit_report_lists_the_collectives_as_written(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(EXPLICIT)
    out = tmp_path / "r.json"
    r = run(path, "-v", "--report", str(out))
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert lines[0].startswith("explicit module"), r.stderr
    assert not any(line.startswith(("values sharded", "conflicts", "reshards")) for line in lines), r.stderr
    assert lines[1] == "collectives: 1, bytes per device (ring model): 7", r.stderr
    assert lines[2] == f'  {path}:6:10: all_reduce {{"data", "model"}}: 7 bytes', r.stderr
    data = json.loads(out.read_text())
    assert data["explicit"] is True and "sharded" not in data and "conflicts" not in data
    # what `sdylog simulate` (which takes the module as written too) finds
    sim = CliRunner().invoke(main, ["simulate", str(path), "--json"])
    assert sim.exit_code == 0, sim.output
    simulated = json.loads(sim.stdout)
    assert simulated["match"] and not simulated["partitioned"]
    assert data["collectives"] == simulated["collectives"]
    assert data["totals"]["bytes_per_device"] == simulated["bytes_per_device"] == 7
    values = {v["mlir_name"]: v for v in data["values"]}   # the global values, their shardings as written
    assert values["@main:%arg0"]["shape"] == [16, 8]
    assert values["@main:%arg0"]["sharding"] == '<@mesh, [{"data"}, {"model"}]>'
    assert values["@main:%2"]["sharding"] == "<@mesh, []>"


def test_an_implicit_module_is_still_propagated(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(IMPLICIT)
    out = tmp_path / "r.json"
    r = run(path, "--report", str(out))
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("values sharded: "), r.stderr
    data = json.loads(out.read_text())
    assert "explicit" not in data and data["sharded"]["of"] > 0
    assert [c["kind"] for c in data["collectives"]] == ["all_reduce"]


def test_explicit_db_is_an_error_and_writes_nothing(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(EXPLICIT)
    db, module = tmp_path / "f.duckdb", tmp_path / "out.mlir"
    r = run(path, "--db", str(db), "-o", str(module))
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{path}: error: --db: the module holds its collectives already"), r.stderr
    assert not db.exists() and not module.exists()
    assert list(tmp_path.iterdir()) == [path]
