"""sdylog.propagate: the Python API on modules of our own, and on JAX
programs (8 host devices, in a subprocess: XLA_FLAGS must be set before jax
loads) against what XLA compiles."""
from __future__ import annotations

from pathlib import Path

import pytest

import sdylog
from sdylog.ir.diagnostics import SdylogError
from tests.jax_subprocess import run_on_8_devices

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# as `lowered.as_text(debug_info=True)` prints it: argument names and op names in locations
MODULE = '''
sdy.mesh @mesh = <["data"=4, "model"=2]>
func.func public @main(%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x"),
                       %arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>} loc("w"))
    -> (tensor<32x128xf32> {jax.result_info = "result['y']"}, tensor<f32> {jax.result_info = "result['s']"}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> loc("jit(f)/dot_general"("f.py":3:8))
  %1 = stablehlo.tanh %0 : tensor<32x128xf32> loc("jit(f)/tanh"("f.py":4:8))
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<32x128xf32>, tensor<f32>) -> tensor<f32>
  return %1, %2 : tensor<32x128xf32>, tensor<f32>
}
'''


@pytest.fixture(scope="module")
def result():
    return sdylog.propagate(MODULE)


def test_values_by_jax_name(result):
    assert list(result.values)[:4] == ["x", "w", "%0", "%1"]
    assert [v.name for v in result.inputs] == ["x", "w"]
    assert [v.name for v in result.outputs] == ["result['y']", "result['s']"]
    y = result["result['y']"]
    assert str(y.sharding) == '<@mesh, [{"data"}, {"model"}]>' and y.shape == (32, 128) and y.element == "f32"
    assert str(result["%0"].sharding) == '<@mesh, [{"data", ?}, {"model", ?}]>'
    assert result.shardings["%0"] == result["%0"].sharding
    assert result["%0"].location == "f.py:3:8 (jit(f)/dot_general)" and result["%0"].op == "stablehlo.dot_general"
    assert result["%0"].mesh.axis_sizes == {"data": 4, "model": 2}
    assert result.meshes["mesh"].num_devices == 8
    assert "sdy.sharding" in result.module_text and result.diagnostics == ()
    assert repr(result).startswith("<sdylog.Propagation of <text>:")
    with pytest.raises(KeyError, match="no value 'nope'"):
        result["nope"]


def test_partition_specs(result):
    jax = pytest.importorskip("jax")
    P = jax.sharding.PartitionSpec
    assert result.in_specs == (P("data", None), P(None, "model"))
    assert result.out_specs == (P("data", "model"), P())
    assert result.specs["%1"] == P("data", "model")
    assert result.specs["x"] == result["x"].spec


def test_explain_and_show_take_jax_names(result, tmp_path):
    text = result.explain("result['y']")
    assert text.startswith("result['y'] (result 0 of @main) gets <@mesh, [{\"data\"}, {\"model\"}]>")
    assert "f.py:4:8 (jit(f)/tanh)" in text
    assert result.explain("%arg0") == result.explain("x").replace("x (argument", "@main:%arg0 (argument", 1)
    svg = tmp_path / "y.svg"
    picture = result.show("result['y']", svg=svg)
    assert picture.startswith("result['y']: f32[32,128] <@mesh, [{\"data\"}, {\"model\"}]>")
    assert svg.read_text().startswith("<svg")
    assert result.show("@main:result0") == picture
    with pytest.raises(SdylogError, match="JAX names here: x, w"):
        result.show("what?")


def test_to_duckdb(result, tmp_path, monkeypatch):
    import duckdb
    from sdylog.commands import pipeline
    runs = []
    run_pipeline = pipeline.run_pipeline
    monkeypatch.setattr(pipeline, "run_pipeline", lambda *a, **kw: runs.append(1) or run_pipeline(*a, **kw))
    for name in ("r.duckdb", "again.duckdb"):
        result.to_duckdb(tmp_path / name)
        con = duckdb.connect(str(tmp_path / name), read_only=True)
        assert con.execute("SELECT count(*) FROM final_dim_axis WHERE axis = 'model'").fetchone()[0] > 0
        con.close()
    assert len(runs) == 1      # (the pipeline run again once, naming the ids)


def test_sources(tmp_path):
    p = tmp_path / "m.mlir"
    p.write_text(MODULE)
    by_path = sdylog.propagate(str(p))
    assert by_path.module_text == sdylog.propagate(p).module_text == sdylog.propagate(MODULE).module_text
    with pytest.raises(SdylogError, match="cannot read"):
        sdylog.propagate(str(tmp_path / "missing.mlir"))
    with pytest.raises(SdylogError, match="cannot propagate a int"):
        sdylog.propagate(3)
    with pytest.raises(SdylogError, match="error:"):
        sdylog.propagate("func.func @main() {\n  %0 = stablehlo.foo : () -> ()\n}\n")


def test_gspmd_text_has_a_note():
    text = ('func.func @main(%a: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"})'
            ' -> tensor<8x8xf32> {\n  %0 = stablehlo.negate %a : tensor<8x8xf32>\n  return %0 : tensor<8x8xf32>\n}\n')
    r = sdylog.propagate(text)
    assert any("note: the module has no sdy.mesh: read 1 of 1" in d for d in r.diagnostics)
    assert str(r["%0"].sharding) == '<@mesh, [{"axis_0", ?}, {?}]>'


@pytest.mark.parametrize("mode", ["shardy", "gspmd"])
def test_out_specs_equal_what_xla_compiles(mode):
    p = run_on_8_devices(str(HERE / "jax_functions.py"), *(["--gspmd"] if mode == "gspmd" else []))
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("equal: ") and last.split()[1].split("/")[0] == last.split()[1].split("/")[1]


def test_the_example_script_runs():
    p = run_on_8_devices(str(ROOT / "examples" / "jax_api.py"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "sdylog and XLA agree" in p.stdout and "why result['out'] is sharded so:" in p.stdout
