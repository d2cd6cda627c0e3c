"""JAX's host callbacks in sharded jits (callback_programs.py: a sharded MLP
with a jax.debug.print of an intermediate, one of padded rows, one inside
scan, an io_callback without results, a jax.pure_callback, one inside
scan), end to end.

- `run --partition`: a callback without results runs once, on device 0,
  with its whole operand, as XLA's compiled program runs it (checked on
  XLA's own HLO); Shardy's pass would leave it on every device with its
  shard.
- `simulate`: a callback without results is not run (the results do not
  depend on it) and the report says so (`skipped` in --json); one with
  results is an error at its location.
- insert-explicit-reshards on pure_callback's propagated module writes what
  Shardy writes (no second reshard to replicated after the callback).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jaxlib.mlir import ir

from sdylog.cli import main
from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.walk import walk_ops
from sdylog.simulate.simulate import simulate_text
from tests.jax_subprocess import generated_programs
from tests.run_partition import partitioned

HERE = Path(__file__).parent
CALLBACK = "xla_ffi_python_cpu_callback"
WITHOUT_RESULTS = ["mlp", "padded", "in_scan", "io_without_result"]


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "callback_programs.py")


def callbacks(module) -> list:
    return [op for op in walk_ops(module.operation) if op.name == "stablehlo.custom_call"
            and ir.StringAttr(op.attributes["call_target_name"]).value == CALLBACK]


def on_device(op) -> int | None:
    """The device whose `stablehlo.if (partition_id == k)` holds op, if any."""
    parent = op.parent
    if parent.name != "stablehlo.if":
        return None
    compare = parent.operands[0].owner
    if compare.name != "stablehlo.compare" or "EQ" not in str(compare.attributes["comparison_direction"]):
        return None
    converted, constant = compare.operands[0].owner, compare.operands[1].owner
    if converted.name != "stablehlo.convert" or converted.operands[0].owner.name != "stablehlo.partition_id":
        return None
    return int(ir.DenseIntElementsAttr(constant.attributes["value"])[0])


@pytest.mark.parametrize("name", WITHOUT_RESULTS + ["pure"])
def test_callback_runs_once_on_device_0_as_xla_runs_it(programs, tmp_path, name):
    xla = programs[name]["xla"]
    assert len(xla) == 1 and xla[0]["guarded"] and xla[0]["partition_id"], xla
    module = partitioned(tmp_path, name, programs[name]["mlir"])
    with module.context:
        (op,) = callbacks(module)
        assert on_device(op) == 0
        shapes = [list(ir.RankedTensorType(v.type).shape) for v in op.operands]
    assert shapes == xla[0]["operand_shapes"]


@pytest.mark.parametrize("name", WITHOUT_RESULTS)
def test_simulate_skips_a_callback_without_results(programs, name):
    text = programs[name]["mlir"]
    report = simulate_text(text, f"{name}.py")
    assert report.partitioned and report.ok, report.difference
    (skipped,) = report.skipped
    assert skipped.target == CALLBACK
    assert "callback_programs.py:" in skipped.location   # the user's line, not the module's
    assert "sdylog.op#" not in skipped.location
    assert report.json()["skipped"] == [{"op": f"stablehlo.custom_call @{CALLBACK}", "location": skipped.location}]
    assert f"not executed: custom_call @{CALLBACK} at {skipped.location}" in report.text()


def test_simulate_cli_says_what_it_did_not_run(programs, tmp_path):
    path = tmp_path / "mlp.mlir"
    path.write_text(programs["mlp"]["mlir"])
    r = CliRunner().invoke(main, ["simulate", str(path)])
    assert r.exit_code == 0, r.output
    assert f"not executed: custom_call @{CALLBACK} at " in r.output
    assert "PASS" in r.output
    r = CliRunner().invoke(main, ["simulate", "--json", str(path)])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and [s["op"] for s in report["skipped"]] == [f"stablehlo.custom_call @{CALLBACK}"]


def test_simulate_refuses_a_callback_with_results_at_its_place(programs, tmp_path):
    text = programs["pure"]["mlir"]
    with pytest.raises(SdylogError) as e:
        simulate_text(text, "pure.mlir")
    assert "callback_programs.py:" in e.value.location
    assert "host callback with results" in e.value.message and "jax.pure_callback" in e.value.message
    path = tmp_path / "pure.mlir"
    path.write_text(text)
    r = CliRunner().invoke(main, ["simulate", str(path)])
    assert r.exit_code == 1
    assert f"error: the simulator cannot execute custom_call @{CALLBACK}: a host callback with results" in r.output


def test_simulate_refuses_a_callback_with_results_in_a_scan_at_its_place(programs):
    """`run --partition` partitions it (test_callback_in_scan.py); the
    simulator could not run the callback on any partitioning."""
    line = next(i for i, text in enumerate((HERE / "callback_programs.py").read_text().splitlines(), 1)
                if "# PURE_IN_SCAN" in text)
    with pytest.raises(SdylogError) as e:
        simulate_text(programs["pure_in_scan"]["mlir"], "pure_in_scan.mlir")
    assert e.value.location.startswith(f"{HERE / 'callback_programs.py'}:{line}:"), e.value.location
    assert e.value.message.startswith(f"the simulator cannot execute custom_call @{CALLBACK}: a host callback with "
                                      "results"), e.value.message


def test_insert_explicit_reshards_on_pure_callback_writes_what_shardy_writes(programs):
    """The propagated module holds the export's reshards around the callback
    (to the device, and after it to the global mesh's replicated sharding):
    the full version adds none after it, as Shardy (it added a second
    reshard to replicated, rules/reshard/single_device.dl sd_result_resharded)."""
    from sdylog.passes.driver import optimize_text, parse_flags
    from tests.passes.passes_oracle import shardy
    propagated = optimize_text(programs["pure"]["mlir"], "pure.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    assert propagated.count("sdy.reshard") == 3   # to replicated, to the device, back to replicated
    flag = "sdy-insert-explicit-reshards{enable-full-version=true}"
    want = shardy(propagated, flag)
    got = optimize_text(propagated, "pure.mlir", parse_flags(["-sdy-insert-explicit-reshards=enable-full-version=true"]))
    assert _without_locations(got) == _without_locations(want)


def test_export_leaves_a_callback_without_results_as_shardy_does(programs):
    """Only the full version gathers a debug.print's operand onto device 0:
    -sdy-propagation-pipeline's output is Shardy's."""
    from sdylog.passes.driver import optimize_text, parse_flags
    from tests.passes.passes_oracle import shardy
    text = programs["mlp"]["mlir"]
    got = optimize_text(text, "mlp.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    assert _without_locations(got) == _without_locations(shardy(text, "sdy-propagation-pipeline"))
    full = optimize_text(got, "mlp.mlir", parse_flags(["-sdy-insert-explicit-reshards=enable-full-version=true"]))
    assert "sdy.reshard" not in got and full.count("<@maximal_mesh_0, []> : tensor<16x32xf32>") == 1


def _without_locations(text: str) -> str:
    return "\n".join(line for line in text.strip().splitlines() if not line.startswith("#loc"))


# jax.pure_callback as -sdy-propagation-pipeline leaves it (the export's
# reshards onto device 0 and back), its result used by an op without a sharding.
PROPAGATED = """module attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<16x8xf32> {
    %0 = sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<16x8xf32>
    %1 = sdy.reshard %0 <@maximal_mesh_0, []> : tensor<16x8xf32>
    %2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%1) {backend_config = "", sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %3 = sdy.reshard %2 <@mesh, [{}, {}]> : tensor<16x8xf32>
    %4 = stablehlo.add %3, %3 : tensor<16x8xf32>
    return %4 : tensor<16x8xf32>
  }
}
"""


def test_no_second_reshard_to_replicated_after_a_single_device_op():
    from sdylog.passes.driver import optimize_text, parse_flags
    from tests.passes.passes_oracle import shardy
    got = optimize_text(PROPAGATED, "p.mlir", parse_flags(["-sdy-insert-explicit-reshards=enable-full-version=true"]))
    want = shardy(PROPAGATED, "sdy-insert-explicit-reshards{enable-full-version=true}")
    assert got.count("sdy.reshard") == 3
    assert _without_locations(got) == _without_locations(want)
    # a use that is no such reshard still gets one (Shardy's newer pass, the conformance cases)
    used = PROPAGATED.replace("%4 = stablehlo.add %3, %3", "%4 = stablehlo.add %3, %2")
    got = optimize_text(used, "p.mlir", parse_flags(["-sdy-insert-explicit-reshards=enable-full-version=true"]))
    assert got.count("sdy.reshard") == 4


INTERPRETED = """func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {has_side_effect = true} : (tensor<2xf32>) -> ()
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""


def test_interpret_notes_the_callback_it_did_not_run(tmp_path, capsys):
    from sdylog.simulate.interpret import interpret_text
    results, _ = interpret_text(INTERPRETED, "i.mlir")
    assert list(results[0]) == [2.0, 4.0]
    err = capsys.readouterr().err
    assert f"note: not executed: custom_call @{CALLBACK} at i.mlir:3:3" in err


def test_help_and_readme_say_what_happens_to_callbacks():
    r = CliRunner().invoke(main, ["simulate", "--help"])
    assert "jax.debug.print" in r.output and "jax.pure_callback" in r.output and "skipped" in r.output
    readme = (HERE.parent.parent / "README.md").read_text()
    assert "`--json`: `skipped`" in readme and "runs them" in readme
