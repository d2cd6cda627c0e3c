"""-sdy-import-mhlo-shardings on GSPMD modules as JAX lowers them
(jax_use_shardy_partitioner=False), and through `sdylog run`."""
from __future__ import annotations

import subprocess
import sys

from passes_oracle import ours

# jax.jit(f, in_shardings=(P(("model", "data")), P(None, ("data", "model"))), out_shardings=P(None, "data"))
# with a with_sharding_constraint(y, P("model", P.UNCONSTRAINED)), mesh data=4 x model=2
CONSTRAINT = '''
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xf32> {mhlo.sharding = "{devices=[8,1]<=[4,2]T(1,0)}"}, %arg1: tensor<64x128xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"}) -> (tensor<32x128xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "unspecified_dims=[1]", mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<32x128xf32>) -> tensor<32x128xf32>
    %2 = stablehlo.sine %1 : tensor<32x128xf32>
    return %2 : tensor<32x128xf32>
  }
}
'''

# jax.jit(mlp, in_shardings=(P("data", None), P(None, "model"), P())): examples/mlp.mlir in GSPMD form
MLP = '''
module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<64x128xf32> {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg2: tensor<128x16xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<32x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32>
    %1 = call @relu(%0) : (tensor<32x128xf32>) -> tensor<32x128xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x128xf32>, tensor<128x16xf32>) -> tensor<32x16xf32>
    %3 = stablehlo.tanh %2 : tensor<32x16xf32>
    return %3 : tensor<32x16xf32>
  }
  func.func private @relu(%arg0: tensor<32x128xf32>) -> tensor<32x128xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<32x128xf32>
    return %1 : tensor<32x128xf32>
  }
}
'''

# shard_map in GSPMD form, a maximal sharding and a form sdylog does not read
OTHERS = '''
module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xf32> {mhlo.sharding = "{maximal device=3}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,2]<=[4] shard_like 1}"}) -> (tensor<32x32xf32>) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<32x64xf32>) -> tensor<32x64xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<32x64xf32>) -> tensor<8x32xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %3 = stablehlo.custom_call @SPMDShardToFullShape(%2) {backend_config = "", mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x32xf32>) -> tensor<32x32xf32>
    return %3 : tensor<32x32xf32>
  }
}
'''


def test_func_shardings_and_a_constraint(capfd):
    out = ours(CONSTRAINT, "sdy-import-mhlo-shardings")
    assert 'sdy.mesh @mesh = <["axis_0"=4, "axis_1"=2]>' in out
    assert '%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"axis_1", "axis_0"}, {}]>}' in out
    assert '%arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"axis_0", "axis_1"}]>}' in out
    assert '{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"axis_0"}]>}' in out
    # the custom call is a constraint, its unspecified dim open
    assert 'sdy.sharding_constraint %0 <@mesh, [{"axis_1"}, {?}]>' in out
    assert "mhlo.sharding" not in out and "@Sharding" not in out
    assert "note: the module has no sdy.mesh: read 4 of 4 mhlo.sharding attributes" in capfd.readouterr().err


def test_unreadable_forms_get_a_warning_naming_them(capfd):
    out = ours(OTHERS, "sdy-import-mhlo-shardings")
    err = capfd.readouterr().err
    assert "warning: the attribute 'shard_like': the sharding \"{devices=[2,2]<=[4] shard_like 1}\" of " \
           "argument 1 of @main is not read" in err
    assert err.count("shard_map in GSPMD form") == 2      # one per custom call, none for their {manual}
    assert "manual sharding" not in err
    assert 'sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>' in out
    assert "%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}" in out
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"axis_0"}, {"axis_1"}]>' in out
    assert 'mhlo.sharding = "{devices=[2,2]<=[4] shard_like 1}"' in out   # left as it was


def test_a_module_without_shardings_is_left_alone(capfd):
    text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    assert "sdy.mesh" not in ours(text, "sdy-import-mhlo-shardings")
    assert capfd.readouterr().err == ""


def _run(tmp_path, name, text, *args):
    p = tmp_path / name
    p.write_text(text)
    return subprocess.run([sys.executable, "-m", "sdylog.cli", "run", str(p), *args],
                          capture_output=True, text=True)


def test_run_propagates_a_gspmd_module_as_its_sdy_twin(tmp_path):
    """examples/mlp.mlir is the same program lowered for Shardy: with the
    axes renamed, sdylog prints the same shardings."""
    from pathlib import Path
    gspmd = _run(tmp_path, "gspmd.mlir", MLP)
    assert gspmd.returncode == 0, gspmd.stderr
    assert "note: the module has no sdy.mesh: read 3 of 3" in gspmd.stderr
    twin = Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir"
    sdy = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", str(twin)], capture_output=True, text=True)

    def shardings(text):
        return [line.split("{sdy.sharding", 1)[1] for line in text.splitlines() if "{sdy.sharding" in line]
    renamed = [s.replace('"axis_0"', '"data"').replace('"axis_1"', '"model"') for s in shardings(gspmd.stdout)]
    assert renamed == shardings(sdy.stdout) and renamed


def test_run_notes_a_module_with_nothing_to_propagate(tmp_path):
    p = _run(tmp_path, "bare.mlir", "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                                    "  return %a : tensor<4xf32>\n}\n")
    assert p.returncode == 0
    assert "note: the module has no sdy.mesh and no mhlo.sharding: nothing to propagate" in p.stderr
