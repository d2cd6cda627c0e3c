"""`sdylog interpret` and `sdylog simulate` from the command line."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.passes import PASSES

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
  %a = stablehlo.constant dense<0.0> : tensor<2x2xf32>
  %k = stablehlo.constant dense<1.0> : tensor<2xf32>
  %s:3 = "stablehlo.batch_norm_training"(%a, %k, %k) {epsilon = 1.0e-5 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return
}"""
    r = invoke(["interpret"], tmp_path, text)
    assert r.exit_code == 1
    assert "t.mlir:4:10: error: the simulator cannot execute 'stablehlo.batch_norm_training'" in r.output


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
    # (the partial sums returned: convert-global-to-local refuses the module)
    r = invoke(["simulate"], tmp_path, text.replace("return %1", "return %0"), "bad.mlir")
    assert r.exit_code == 1
    assert "'stablehlo.dot_general' op needs an all-reduce of result 0" in r.output


def _convert_without_its_check(monkeypatch):
    """convert-global-to-local as if it did not look for what the module
    still needs: what simulate says of a wrong per-device program."""
    from sdylog.passes import convert_global_to_local
    monkeypatch.setattr(convert_global_to_local, "_left_to_reshard", lambda module, ctx, ops: (None, None))


def test_simulate_reports_a_mismatch(tmp_path, monkeypatch):
    _convert_without_its_check(monkeypatch)
    bad = DOT.replace("%2 = stablehlo.tanh %1", "%2 = stablehlo.tanh %0")
    r = invoke(["simulate"], tmp_path, bad, "bad.mlir")
    assert r.exit_code == 1
    assert "MISMATCH" in r.output


DOT = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<6x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<4x6xf32>, tensor<6x2xf32>) -> tensor<4x2xf32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<4x2xf32>
  %2 = stablehlo.tanh %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}"""


def test_simulate_json_report(tmp_path):
    import json
    r = invoke(["simulate", "--json"], tmp_path, DOT)
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert {"match", "max_abs_error", "max_rel_error", "collectives", "bytes_per_device"} <= set(report)
    assert report["match"] and report["partitioned"] is False      # explicit: taken as written
    (c,) = report["collectives"]
    # ring model: 2 (g - 1) / g * S, S = 4x2 f32 = 32 bytes, g = 2
    assert c == {"kind": "all_reduce", "axes": '{"x"}', "location": f"{tmp_path}/t.mlir:5:8", "bytes_per_device": 32}
    assert report["bytes_per_device"] == 32


def test_mismatch_names_the_partial_sum_never_reduced(tmp_path, monkeypatch):
    _convert_without_its_check(monkeypatch)
    r = invoke(["simulate"], tmp_path, DOT.replace("%2 = stablehlo.tanh %1", "%2 = stablehlo.tanh %0"), "bad.mlir")
    assert r.exit_code == 1
    assert (f"first difference: {tmp_path}/bad.mlir:4:8: 'stablehlo.dot_general' result #0 on devices [0, 1]"
            in r.output)
    assert 'each device holds a partial sum over {"x"} that is never reduced (an all_reduce is missing)' in r.output


def test_mismatch_names_shards_read_out_of_place(tmp_path):
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = sdy.collective_permute %a out_sharding=<@mesh, [{"x"}]> : tensor<8xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  return %1 : tensor<8xf32>
}"""
    mesh = 'sdy.mesh @mesh = <["x"=2]>\nsdy.mesh @swapped = <["x"=2], device_ids=[1, 0]>'
    bad = text.replace('sdy.mesh @mesh = <["x"=2]>', mesh).replace('out_sharding=<@mesh, [{"x"}]>',
                                                                    'out_sharding=<@swapped, [{"x"}]>')
    bad = bad.replace('%1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh',
                      '%1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh')
    # (the negate reads a value in the swapped device order: a reshard is
    # missing, which convert-global-to-local finds before anything runs)
    r = invoke(["simulate", "--as-written"], tmp_path, bad, "perm.mlir")
    assert r.exit_code == 1, r.output
    assert f"{tmp_path}/perm.mlir:5:8: error: 'stablehlo.negate' op needs a reshard of result 0" in r.output
    # (a reverse along its sharded dimension, which convert-global-to-local
    # refuses (tests/passes/test_convert_needs_reshards.py), is resolved
    # first even as written: tests/partition/test_explicit_steps.py)


def test_simulate_partitions_a_jax_export(tmp_path):
    """Only arguments carry shardings: propagation and the partitioner run
    (as far as the passes sdylog has go)."""
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %a : tensor<8x4xf32>
  %1 = stablehlo.add %0, %a : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}"""
    import json
    r = invoke(["simulate", "--json"], tmp_path, text)
    assert r.exit_code == 0, r.output
    report, _ = json.JSONDecoder().raw_decode(r.output[r.output.index("{"):])   # (stderr may follow)
    assert report["match"] and report["partitioned"] and report["collectives"] == []


SPMD = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""


@pytest.mark.parametrize("options, named", [
    (["--channel-mode", "rendezvous"], "--channel-mode rendezvous: an option"),
    (["--recv-policy", "window:2", "--reduce-locally"], "--reduce-locally, --recv-policy window:2: options"),
    (["--fanout", "chain"], "--fanout chain: an option"),
    (["--bf16-transfers", "nearest"], "--bf16-transfers nearest: an option"),
    (["--devices", "2"], "--devices 2: an option"),
])
def test_simulate_refuses_mpmd_options_on_an_spmd_module(tmp_path, options, named):
    """Options of the MPMD run on a module that places nothing on devices
    (and no --assign) would change nothing: a usage error, no report."""
    r = invoke(["simulate", *options], tmp_path, SPMD)
    assert r.exit_code == 2, r.output
    assert r.output == (f"error: {named} of the MPMD run, but {tmp_path}/t.mlir places no op on a device "
                        "(no maximal sharding, no --assign): it runs as SPMD, where they change nothing\n")


@pytest.mark.parametrize("options", [[], ["--channel-mode", "buffered", "--recv-policy", "eager"]])
def test_simulate_takes_mpmd_defaults_on_an_spmd_module(tmp_path, options):
    """Their defaults, written out or not, ask for nothing: the SPMD run goes on."""
    r = invoke(["simulate", *options], tmp_path, SPMD)
    assert r.exit_code == 0, r.output


MPMD = """sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
func.func @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %a {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : tensor<8x4xf32>
  %1 = stablehlo.exponential %0 {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>]>} : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}"""

CALLS = """func.func @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = call @f(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.exponential %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
func.func private @f(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.tanh %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""


@pytest.mark.parametrize("text, options, named", [
    (MPMD, ["--rtol", "1e-3"], "--rtol 0.001: an option"),
    (MPMD, ["--atol", "0"], "--atol 0.0: an option"),
    (MPMD, ["--as-written", "--no-halo-exchange"], "--as-written, --no-halo-exchange: options"),
    (MPMD, ["--pass-options", "per-dim-all-gather=true"], "--pass-options per-dim-all-gather=true: an option"),
    (MPMD, ["--pipeline", "-sdy-reshard-to-collectives -sdy-close-shardings"],
     "--pipeline '-sdy-reshard-to-collectives -sdy-close-shardings': an option"),
    (CALLS, ["--assign", "f@1", "--devices", "2", "--rtol", "0.5"], "--rtol 0.5: an option"),
])
def test_simulate_refuses_spmd_options_on_an_mpmd_module(tmp_path, text, options, named):
    """The mirror: options of the SPMD run on a module that runs as MPMD (ops
    placed on devices, or --assign; compared bitwise, no SPMD pipeline) would
    change nothing: a usage error, no report."""
    r = invoke(["simulate", *options], tmp_path, text)
    assert r.exit_code == 2, r.output
    assert r.output == (f"error: {named} of the SPMD run, but {tmp_path}/t.mlir places ops on devices "
                        "(maximal shardings or --assign): it runs as MPMD, where they change nothing\n")


@pytest.mark.parametrize("text, options", [
    (MPMD, []), (MPMD, ["--atol", "1e-5", "--halo-exchange", "--seed", "3", "--json"]),
    (CALLS, ["--assign", "f@1", "--devices", "2", "--atol", "1e-5"]),
])
def test_simulate_takes_spmd_defaults_on_an_mpmd_module(tmp_path, text, options):
    """Their defaults, written out or not, ask for nothing: the MPMD run goes on
    (--seed and --json apply to it)."""
    r = invoke(["simulate", *options], tmp_path, text)
    assert r.exit_code == 0, r.output


def emitted(tmp_path):
    """MPMD partitioned by `sdylog mpmd`: functions @main.dev0/1 marked sdylog.device."""
    (tmp_path / "placed.mlir").write_text(MPMD)
    r = CliRunner().invoke(main, ["mpmd", str(tmp_path / "placed.mlir"), "-q", "-o", str(tmp_path / "t.mlir")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "t.mlir").read_text()
    assert "sdylog.device = 1" in text
    return text


@pytest.mark.parametrize("options, named", [
    (["--fanout", "chain"], "--fanout chain: an option"),
    (["--assign", "main@1", "--devices", "2"], "--assign main@1, --devices 2: options"),
    (["--entry", "main.dev0"], "--entry main.dev0: an option"),
    (["--recv-policy", "lazy", "--reduce-locally", "--bf16-transfers", "nearest"],
     "--bf16-transfers nearest, --reduce-locally, --recv-policy lazy: options"),
    (["--rtol", "1e-3", "--pipeline", "-sdy-close-shardings"], "--rtol 0.001, --pipeline -sdy-close-shardings: options"),
])
def test_simulate_refuses_partition_options_on_an_emitted_module(tmp_path, options, named):
    """A module `sdylog mpmd` wrote runs its per-device functions as written
    (--seed and --channel-mode only): --entry, the options of the MPMD
    partition and those of the SPMD run would change nothing there."""
    r = invoke(["simulate", *options], tmp_path, emitted(tmp_path))
    assert r.exit_code == 2, r.output
    assert r.output == (f"error: {named} of a run that partitions, but {tmp_path}/t.mlir is partitioned already "
                        "(functions marked sdylog.device, as `sdylog mpmd` writes them): its per-device programs "
                        "run as written, where they change nothing\n")


@pytest.mark.parametrize("options", [
    [], ["--channel-mode", "rendezvous", "--seed", "3", "--json"],
    ["--entry", "main", "--fanout", "star", "--recv-policy", "eager", "--atol", "1e-5", "--halo-exchange"],
])
def test_simulate_takes_defaults_on_an_emitted_module(tmp_path, options):
    r = invoke(["simulate", *options], tmp_path, emitted(tmp_path))
    assert r.exit_code == 0, r.output
    assert "device 1" in r.output or '"bytes_per_device"' in r.output


def test_run_partition_prints_the_per_device_program(tmp_path):
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.tanh %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""
    path = tmp_path / "m.mlir"
    path.write_text(text)
    out = tmp_path / "local.mlir"
    r = CliRunner().invoke(main, ["run", str(path), "--partition", "-o", str(out)])
    assert r.exit_code == 0, r.output
    local = out.read_text()
    assert "stablehlo.tanh %arg0 : tensor<4x4xf32>" in local and "sdy." not in local
    assert "collectives: 0, bytes per device (ring model): 0" in r.output


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
def test_run_partition_lists_each_collective(tmp_path):
    text = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.tanh %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""
    path = tmp_path / "m.mlir"
    path.write_text(text)
    r = CliRunner().invoke(main, ["run", str(path), "--partition"])
    assert r.exit_code == 0, r.output
    assert '"stablehlo.all_gather"' in r.output
    # (g - 1) * S, S = 4x4 f32 = 64 bytes, g = 2
    assert "collectives: 1, bytes per device (ring model): 64" in r.output
    assert 'all_gather [{"x"}, {}]: 64 bytes' in r.output


def _cross_mesh_dot(mesh_b: str, lhs: str, rhs: str) -> str:
    return f"""sdy.mesh @mesh_a = <["x"=4]>
sdy.mesh @mesh_b = <{mesh_b}>
func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh_a, {lhs}>}},
                %b: tensor<16x4xf32> {{sdy.sharding = #sdy.sharding<@mesh_b, {rhs}>}}) -> tensor<8x4xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}}"""


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
@pytest.mark.parametrize("lhs, rhs", [
    ('[{}, {"x"}]', '[{"x", "y"}, {}]'),   # (was a per-device program computing something else)
    ('[{"x"}, {}]', '[{}, {"y"}]'),        # (was a per-device program that does not verify)
])
def test_run_partition_refuses_a_dot_on_two_meshes(tmp_path, lhs, rhs):
    """Operands sharded on meshes of different axes: insert-explicit-reshards
    leaves the dot as it is (as Shardy does) and it has no per-device
    program; a located error, no output file."""
    path = tmp_path / "m.mlir"
    path.write_text(_cross_mesh_dot('["x"=2, "y"=2]', lhs, rhs))
    out = tmp_path / "local.mlir"
    r = CliRunner().invoke(main, ["run", str(path), "--partition", "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert f"{path}:5:8: error: 'stablehlo.dot_general' op has sharded tensors on meshes with different axes " \
           "(@mesh_a, @mesh_b)" in r.output
    assert not out.exists()


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
def test_simulate_dot_on_meshes_of_other_device_order(tmp_path):
    """Meshes with the same axes in another device order are one mesh to
    insert-explicit-reshards: the operand is resharded and the program matches."""
    import json
    text = _cross_mesh_dot('["x"=4], device_ids=[3, 2, 1, 0]', '[{"x"}, {}]', '[{}, {"x"}]')
    r = invoke(["simulate", "--json"], tmp_path, text)
    assert r.exit_code == 0, r.output
    report, _ = json.JSONDecoder().raw_decode(r.output[r.output.index("{"):])
    assert report["match"] and report["partitioned"] and report["collectives"]


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
def test_simulate_reduces_an_unreduced_argument_once(tmp_path):
    """An argument unreduced on "x" holds partial sums (the simulator hands
    each device its part): `--partition` reduces it with one all-reduce,
    not one per insert-explicit-reshards run (issue 18)."""
    text = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %a, %b : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}"""
    r = invoke(["simulate"], tmp_path, text)
    assert r.exit_code == 0, r.output
    assert "collectives: 1," in r.output and "PASS" in r.output


_TWO_MESHES = """sdy.mesh @mesh_a = <["x"=4]>
sdy.mesh @mesh_b = <["x"=2, "y"=2]>
"""
_TWO_ARGS = """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_b, [{"x", "y"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
"""


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
@pytest.mark.parametrize("body", [
    """  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%i = %c, %x = %a, %y = %b) : tensor<i32>, tensor<8x16xf32>, tensor<8x16xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %x2 = stablehlo.add %x, %x : tensor<8x16xf32>
      %y2 = stablehlo.multiply %y, %y : tensor<8x16xf32>
      stablehlo.return %j, %x2, %y2 : tensor<i32>, tensor<8x16xf32>, tensor<8x16xf32>
    }
  return %0#1, %0#2 : tensor<8x16xf32>, tensor<8x16xf32>
}""",
    """  %0:2 = "stablehlo.optimization_barrier"(%a, %b) : (tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xf32>
}"""], ids=["while", "optimization_barrier"])
def test_simulate_data_flow_ops_carry_values_on_two_meshes(tmp_path, body):
    """while and optimization_barrier treat each value on its own (no
    sharding rule, no common mesh): values on two meshes partition."""
    r = invoke(["simulate"], tmp_path, _TWO_MESHES + _TWO_ARGS + body)
    assert r.exit_code == 0, r.output
    assert "PASS" in r.output


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
def test_simulate_dot_with_a_replicated_operand_on_another_mesh(tmp_path):
    """The dot is left as it is (its tensors are on meshes of different
    axes) but needs no reshard: no factor is sharded on both meshes."""
    text = _TWO_MESHES + """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>},
                %b: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh_b, [{}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh_a, [{"x"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""
    r = invoke(["simulate"], tmp_path, text)
    assert r.exit_code == 0, r.output
    assert "PASS" in r.output


@pytest.mark.skipif("sdy-insert-explicit-reshards" not in PASSES, reason="needs -sdy-insert-explicit-reshards")
@pytest.mark.parametrize("mesh_b, sharding", [
    ("", '#sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x", "y"}, {}]>'),    # (was let through: no all-reduce)
    ('sdy.mesh @mesh_b = <["x"=2, "y"=2]>', '#sdy.sharding<@mesh_b, [{"x", "y"}, {}]>'),
], ids=["inline", "named"])
def test_global_to_local_refuses_a_contraction_split_on_two_meshes(tmp_path, mesh_b, sharding):
    """The contracting dim is split on both sides, on meshes of different
    axes, named or inline: no per-device program (a located error), not one
    without the all-reduce."""
    text = """sdy.mesh @mesh_a = <["x"=4]>
MESH_B
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{}, {"x"}]>},
                %b: tensor<16x4xf32> {sdy.sharding = SHARDING}) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}""".replace("MESH_B", mesh_b).replace("SHARDING", sharding)
    r = invoke(["opt", "-sdy-insert-explicit-reshards", "-sdy-convert-global-to-local"], tmp_path, text)
    assert r.exit_code == 1, r.output
    assert "t.mlir:5:8: error: 'stablehlo.dot_general' op has sharded tensors on meshes with different axes" in r.output
