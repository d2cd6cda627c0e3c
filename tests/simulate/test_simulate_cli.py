"""`sdylog interpret` and `sdylog simulate` from the command line."""
from __future__ import annotations

from click.testing import CliRunner

from sdylog.cli import main

PARALLEL = """
func.func @gather(%x: tensor<2xi32>) -> tensor<4xi32> {
  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@gather, @gather]]} : (tensor<2xi32>, tensor<2xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  %want = stablehlo.constant dense<[1, 2, 3, EXPECTED]> : tensor<4xi32>
  "check.expect_eq"(%r#1, %want) : (tensor<4xi32>, tensor<4xi32>) -> ()
  %f = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = stablehlo.constant dense<[1.00001, 2.0]> : tensor<2xf32>
  "check.expect_almost_eq"(%f, %g) : (tensor<2xf32>, tensor<2xf32>) -> ()
  "check.expect_close"(%f, %f) : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
"""


def invoke(args, tmp_path, text, name="t.mlir"):
    path = tmp_path / name
    path.write_text(text)
    return CliRunner().invoke(main, [args[0], str(path), *args[1:]])


def test_interpret_passing_checks(tmp_path):
    r = invoke(["interpret"], tmp_path, PARALLEL.replace("EXPECTED", "4"))
    assert r.exit_code == 0, r.output


def test_interpret_failing_check_reports_location(tmp_path):
    r = invoke(["interpret"], tmp_path, PARALLEL.replace("EXPECTED", "5"))
    assert r.exit_code == 1
    assert "t.mlir:12:3: error: check.expect_eq failed" in r.output


def test_interpret_unsupported_op_names_op_and_location(tmp_path):
    text = """func.func @main() {
  %a = stablehlo.constant dense<1> : tensor<2xui32>
  %k = stablehlo.constant dense<1> : tensor<2xui64>
  %s:2 = stablehlo.rng_bit_generator %k, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2xui32>)
  return
}"""
    r = invoke(["interpret"], tmp_path, text)
    assert r.exit_code == 1
    assert "t.mlir:4:10: error: the simulator cannot execute 'stablehlo.rng_bit_generator'" in r.output


def test_simulate_reports_collectives_and_mismatch(tmp_path):
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<6x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<4x6xf32>, tensor<6x2xf32>) -> tensor<4x2xf32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}"""
    r = invoke(["simulate", "--seed", "3"], tmp_path, text)
    assert r.exit_code == 0, r.output
    assert "all_reduce" in r.output and "PASS" in r.output
    r = invoke(["simulate"], tmp_path, text.replace("return %1", "return %0"), "bad.mlir")
    assert r.exit_code == 1
    assert "MISMATCH" in r.output
