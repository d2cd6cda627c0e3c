"""`sdylog simulate` reads a GSPMD export (`mhlo.sharding` attributes, no
sdy mesh) as `sdylog run` does: -sdy-import-mhlo-shardings, with its note
(rev33 F6: it said "the module has no mesh to simulate")."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sdylog.cli import main

# JAX's `jnp.einsum("bij,bjk->bik", a, b)` on a 2x2x2 mesh with
# jax_use_shardy_partitioner=False (rev33 jxg/m222_dot.mlir, minimized): b
# tiled with the transposed device order, the contracting dim sharded.
DOT = """module @jit__lambda attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8x8xf32> {mhlo.sharding = "{devices=[2,2,2]<=[8]}"}, %arg1: tensor<4x8x4xf32> {mhlo.sharding = "{devices=[2,2,1,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}"}) -> (tensor<4x8x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x8xf32>, tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
    return %0 : tensor<4x8x4xf32>
  }
}"""

# A `with_sharding_constraint` in GSPMD form (a custom call @Sharding) moving
# the rows' axis to the columns (rev33 jxg/cond_wsc.mlir, minimized).
CONSTRAINT = """module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<8x8xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[1,8]<=[8]}"}) {
    %0 = stablehlo.exponential %arg0 : tensor<8x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.negate %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}"""


@pytest.mark.parametrize("text, mesh", [(DOT, '<["axis_0"=2, "axis_1"=2, "axis_2"=2]>'),
                                        (CONSTRAINT, '<["axis_0"=4, "axis_1"=2]>')], ids=["dot", "constraint"])
def test_simulate_reads_mhlo_shardings(tmp_path, text, mesh):
    path = tmp_path / "g.mlir"
    path.write_text(text)
    r = CliRunner().invoke(main, ["simulate", str(path), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and report["partitioned"] and report["devices"] == 8, report
    assert report["collectives"], report     # (sharded as the attributes say: not all replicated)
    # the note `sdylog run` prints, once
    assert r.stderr.count("note: the module has no sdy.mesh") == 1, r.stderr
    assert f"into @mesh = {mesh}" in r.stderr


def test_simulate_a_module_with_neither_mesh_nor_mhlo_sharding(tmp_path):
    path = tmp_path / "n.mlir"
    path.write_text("""func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}""")
    r = CliRunner().invoke(main, ["simulate", str(path), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and report["devices"] == 1 and not report["collectives"], report
    assert "every device runs the whole program, simulated on one" in r.stderr
