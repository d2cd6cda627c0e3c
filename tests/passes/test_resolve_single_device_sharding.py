"""-sdy-resolve-single-device-sharding: ops on a maximal mesh run under
`stablehlo.if (device id == k)` and their results are broadcast by an all-reduce."""
from __future__ import annotations

import pytest

from quick_look_cases import assert_look_agrees, lit_modules
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import resolve_single_device_sharding
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

MESHES = '''sdy.mesh @mesh = <["x"=2, "y"=2]>
sdy.mesh @single_dev_0 = <[], device_ids=[0]>
sdy.mesh @single_dev_3 = <[], device_ids=[3]>
'''

# As insert-explicit-reshards leaves a single-device op: operands resharded to
# replicated then to the device, results resharded back to replicated.
ON_DEVICE_3 = MESHES + '''
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = sdy.reshard %a <@mesh, [{}, {}]> : tensor<8x4xf32>
  %1 = sdy.reshard %0 <@single_dev_3, []> : tensor<8x4xf32>
  %2 = stablehlo.sine %1 {sdy.sharding = #sdy.sharding_per_value<[<@single_dev_3, []>]>} : tensor<8x4xf32>
  %3 = sdy.reshard %2 <@mesh, [{}, {}]> : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}
'''


def resolve(text, flags=("--sdy-resolve-single-device-sharding",)):
    return optimize_text(text, "t.mlir", parse_flags(list(flags)))


def test_op_runs_under_a_device_guard():
    out = resolve(ON_DEVICE_3)
    assert "stablehlo.constant dense<3> : tensor<i64>" in out
    assert "stablehlo.compare EQ, %2, %c" in out
    then, _, rest = out.partition('"stablehlo.if"')[2].partition("}, {")
    assert "%6 = stablehlo.sine %0 : tensor<8x4xf32>" in then   # reads the replicated value, no sharding
    assert "stablehlo.constant dense<0.000000e+00> : tensor<8x4xf32>" in rest
    # the all-reduce over every axis of the global mesh takes the reshard to replicated's place
    assert 'sdy.all_reduce {"x", "y"} %' in out and "out_sharding=<@mesh, [{}, {}]>" in out
    assert "@single_dev_3" not in out.split("func.func")[1]     # the reshard to the device is gone
    assert out.count("sdy.reshard") == 1                          # the one to replicated before the op stays


def test_replica_id_with_replica_count():
    out = resolve(ON_DEVICE_3, ["--sdy-resolve-single-device-sharding=replica-count=4 partition-count=1"])
    assert "stablehlo.replica_id" in out and "stablehlo.partition_id" not in out


def test_token_results_get_a_fresh_token():
    text = MESHES + '''
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, !stablehlo.token) {
  %0:2 = stablehlo.custom_call @Effect(%a) {sdy.sharding = #sdy.sharding_per_value<[<@single_dev_0, []>, <@mesh, []>]>} : (tensor<4xf32>) -> (tensor<4xf32>, !stablehlo.token)
  return %0#0, %0#1 : tensor<4xf32>, !stablehlo.token
}'''
    out = resolve(text)
    assert "stablehlo.create_token" in out
    assert 'sdy.all_reduce {"x", "y"} %3#0 out_sharding=<@mesh, [{}]>' in out
    assert "return %4, %3#1" in out


def test_without_a_global_mesh_nothing_changes():
    text = 'sdy.mesh @single_dev_0 = <[], device_ids=[0]>\n' + '''
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %a {sdy.sharding = #sdy.sharding_per_value<[<@single_dev_0, []>]>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}'''
    out = resolve(text)
    assert "stablehlo.if" not in out and "stablehlo.sine %arg0 {sdy.sharding" in out


def test_results_on_two_devices_are_a_located_error():
    text = MESHES + '''
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = stablehlo.custom_call @Two(%a) {sdy.sharding = #sdy.sharding_per_value<[<@single_dev_0, []>, <@single_dev_3, []>]>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}'''
    with pytest.raises(SdylogError) as e:
        resolve(text)
    assert "conflicting single-device result shardings" in str(e.value)
    assert str(e.value).startswith("t.mlir:6:")


def test_per_device_program_computes_the_global_result():
    # Every device gets device 3's sine through the all-reduce; the reshards
    # left become collectives by hand here (reshard-to-collectives is another pass).
    text = ON_DEVICE_3.replace("%0 = sdy.reshard %a <@mesh, [{}, {}]>",
                               '%0 = sdy.all_gather [{"x"}, {"y"}] %a out_sharding=<@mesh, [{}, {}]>')
    report = simulate_text(text, "single.mlir", seed=3, pipeline=["--sdy-resolve-single-device-sharding"])
    assert report.ok, report.text()


# An inlined maximal mesh: the look at the shardings must see it too.
INLINED = '''sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sine %a {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[1]>, []>]>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}'''
NONE_ON_ONE_DEVICE = MESHES + '''
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.sine %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}'''


@pytest.mark.parametrize("text", [ON_DEVICE_3, INLINED, NONE_ON_ONE_DEVICE, *lit_modules(
    "resolve_single_device_sharding.mlir", "insert_explicit_reshards/single_device_sharding.mlir",
    "convert_global_to_local")])
def test_the_look_for_maximal_meshes_agrees_with_the_rules(text, monkeypatch):
    assert_look_agrees(text, "--sdy-resolve-single-device-sharding", resolve_single_device_sharding, "_names_maximal_mesh", monkeypatch)


def test_an_op_on_an_inlined_maximal_mesh_runs_on_its_device():
    assert "stablehlo.if" in resolve(INLINED) and "stablehlo.if" not in resolve(NONE_ON_ONE_DEVICE)
