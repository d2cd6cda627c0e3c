"""Host callbacks in an SPMD program (r34 G6): JAX places the custom_call of
jax.debug.print / jax.pure_callback on device 0 (`@maximal_mesh_0`) in a
sharded jit. That one placement does not make the module MPMD
(hints.places_on_devices): `simulate` takes it as SPMD, runs all but a
callback without results and refuses one with results at its place; `run --partition` of a value moved onto the maximal
mesh and back (pure_callback) is refused at the reshard, in the user's terms."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir import parse_module
from sdylog.mpmd.hints import places_on_devices

MESHES = """module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
"""
ARG = '%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}'
CALLBACK = ('stablehlo.custom_call @xla_ffi_python_cpu_callback({x}) {{backend_config = "", {effect}'
            'sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>}}')

# jax.debug.print("{}", x.sum()); x * 2
DEBUG_PRINT = MESHES + f"""  func.func public @main({ARG}) -> tensor<16x8xf32> {{
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    {CALLBACK.format(x="%0", effect="has_side_effect = true, ")} : (tensor<f32>) -> ()
    %1 = stablehlo.add %arg0, %arg0 : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }}
}}
"""

# jax.pure_callback(lambda v: v * 2, ..., x) + 1
PURE_CALLBACK = MESHES + f"""  func.func public @main({ARG}) -> tensor<16x8xf32> {{
    %0 = {CALLBACK.format(x="%arg0", effect="")} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.add %0, %0 : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }}
}}
"""


def invoke(tmp_path, text, *args):
    path = tmp_path / "cb.mlir"
    path.write_text(text)
    return path, CliRunner().invoke(main, [args[0], str(path), *args[1:]])


@pytest.mark.parametrize("text, mpmd", [
    (DEBUG_PRINT, False),
    (PURE_CALLBACK, False),
    # a placement of another op, or of an argument, is the user's: MPMD
    (DEBUG_PRINT.replace("%1 = stablehlo.add %arg0, %arg0 : tensor<16x8xf32>",
                         "%1 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<"
                         "[<@maximal_mesh_0, []>]>} : tensor<16x8xf32>"), True),
    (PURE_CALLBACK.replace('<@mesh, [{"data"}, {"model"}]>', "<@maximal_mesh_0, []>"), True),
    (PURE_CALLBACK.replace("xla_ffi_python_cpu_callback", "my_kernel"), True),
])
def test_host_callbacks_alone_do_not_make_a_module_mpmd(text, mpmd):
    assert places_on_devices(parse_module(text)) is mpmd


def test_simulate_refuses_a_callback_with_results_at_its_place(tmp_path):
    path, r = invoke(tmp_path, PURE_CALLBACK, "simulate")
    assert r.exit_code == 1
    assert f"{path}:5:" in r.output
    assert "error: the simulator cannot execute custom_call @xla_ffi_python_cpu_callback" in r.output
    assert "MPMD" not in r.output


def test_simulate_runs_all_but_a_callback_without_results(tmp_path):
    path, r = invoke(tmp_path, DEBUG_PRINT, "simulate")
    assert r.exit_code == 0, r.output
    assert f"not executed: custom_call @xla_ffi_python_cpu_callback at {path}:7:" in r.output
    assert "MPMD" not in r.output


def test_simulate_mpmd_says_what_it_did_not_run(tmp_path):
    """A module placed on devices (the add on device 0) runs as MPMD; its
    debug.print is not run there either, and the report says so."""
    text = DEBUG_PRINT.replace("%1 = stablehlo.add %arg0, %arg0 : tensor<16x8xf32>",
                               "%1 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<"
                               "[<@maximal_mesh_0, []>]>} : tensor<16x8xf32>")
    text = text.replace(' {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}', "")
    path, r = invoke(tmp_path, text, "simulate", "--json")
    assert r.exit_code == 0, r.output
    import json
    report = json.loads(r.stdout)
    assert report["match"]
    assert [s["op"] for s in report["skipped"]] == ["stablehlo.custom_call @xla_ffi_python_cpu_callback"]
    assert report["skipped"][0]["location"].startswith(f"{path}:7:")


def test_run_partition(tmp_path):
    _, r = invoke(tmp_path, DEBUG_PRINT, "run", "--partition")
    assert r.exit_code == 0, r.output
    assert "tensor<4x4xf32>" in r.stdout
    # the export's reshards onto device 0 and back are the single-device op's
    # (rules/reshard/single_device.dl): the callback runs on device 0, its result is broadcast
    _, r = invoke(tmp_path, PURE_CALLBACK, "run", "--partition")
    assert r.exit_code == 0, r.output
    assert "sdy." not in r.stdout
    callback = r.stdout.index("@xla_ffi_python_cpu_callback")
    assert r.stdout.index('"stablehlo.if"') < callback < r.stdout.index('"stablehlo.all_reduce"', callback)


# A value moved onto device 0 and back that no op placed there reads.
THROUGH_DEVICE_0 = """sdy.mesh @mesh = <["x"=2]>
sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{}]> : tensor<8xf32>
  %1 = sdy.reshard %0 <@maximal_mesh_0, []> : tensor<8xf32>
  %2 = sdy.reshard %1 <@mesh, [{}]> : tensor<8xf32>
  %3 = stablehlo.add %2, %2 : tensor<8xf32>
  return %3 : tensor<8xf32>
}
"""


def test_run_partition_refuses_a_value_moved_through_a_maximal_mesh(tmp_path):
    path, r = invoke(tmp_path, THROUGH_DEVICE_0, "run", "--partition")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert (f"{path}:5:8: error: moving a value onto or off the maximal mesh @maximal_mesh_0 (device 0) "
            "is not supported but for an op placed on that device") in r.output
    assert "must be lowered" not in r.output


# PURE_CALLBACK as -sdy-propagation-pipeline leaves it: its export wrote the
# single-device op's reshards.
PROPAGATED = MESHES + f"""  func.func public @main({ARG}) -> tensor<16x8xf32> {{
    %0 = sdy.reshard %arg0 <@mesh, [{{}}, {{}}]> : tensor<16x8xf32>
    %1 = sdy.reshard %0 <@maximal_mesh_0, []> : tensor<16x8xf32>
    %2 = {CALLBACK.format(x="%1", effect="")} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %3 = sdy.reshard %2 <@mesh, [{{}}, {{}}]> : tensor<16x8xf32>
    %4 = stablehlo.add %3, %3 : tensor<16x8xf32>
    return %4 : tensor<16x8xf32>
  }}
}}
"""


def test_insert_explicit_reshards_keeps_the_reshard_onto_the_device():
    """The full insert pass takes the reshard onto device 0 for what it is,
    not for an op on that device (it made a second one after it, the
    callback's operand then went back to the mesh and to the device again,
    and resolve-single-device-sharding left reshards that have no collectives)."""
    from sdylog.passes.driver import optimize_text, parse_flags
    out = optimize_text(PROPAGATED, "p.mlir", parse_flags(["--sdy-insert-explicit-reshards=enable-full-version=true"]))
    assert out.count("<@maximal_mesh_0, []> : tensor<16x8xf32>") == 1, out
