"""A reshard (or sharding constraint) onto a device whose result only host
callbacks read leaves the module SPMD (rules/mpmd/kind.dl callback_feed):
the partitioner writes one for a callback's operand, the export for a
callback with results (jax.pure_callback), sdylog's full
insert-explicit-reshards for one without (jax.debug.print, which XLA runs
once on device 0). `sdylog simulate` of `sdylog opt`'s full-insert output
of a debug.print program runs it as the SPMD program it is, as it runs the
module before the insert; it was taken for MPMD and refused ("'stablehlo.add'
is sharded over the devices of mesh")."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir import parse_module
from sdylog.mpmd.hints import places_on_devices
from sdylog.passes.driver import optimize_text, parse_flags
from tests.mpmd.test_host_callbacks import DEBUG_PRINT, PROPAGATED
from tests.mpmd.test_module_kind import T, kind, spmd

RESHARD = f"%b = sdy.reshard %a <@maximal_mesh_1, []> : {T}"
CONSTRAINT = f"%b = sdy.sharding_constraint %a <@maximal_mesh_1, []> : {T}"
PRINT = (f"stablehlo.custom_call @xla_ffi_python_cpu_callback(%b) {{has_side_effect = true, "
         f"sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>]>}} : ({T}) -> ()")


@pytest.mark.parametrize("body", [
    f"{RESHARD}\n  {PRINT}",
    f"{CONSTRAINT}\n  {PRINT}",
    # read by two callbacks
    f"{RESHARD}\n  {PRINT}\n  {PRINT}",
    # a pure_callback's, with its result used
    f"{RESHARD}\n  %c = {PRINT.replace('has_side_effect = true, ', '').replace('-> ()', f'-> {T}')}\n"
    f"  %d = stablehlo.abs %c : {T}",
])
def test_a_reshard_onto_a_device_for_host_callbacks_only_is_spmd(body):
    assert kind(spmd(body=body)) == (False, [], [])


@pytest.mark.parametrize("body, ops", [
    # read by a callback and by another op
    (f"{RESHARD}\n  {PRINT}\n  %d = stablehlo.abs %b : {T}", [1]),
    # read by a custom_call that is no host callback (placed on device 1 itself)
    (f"{RESHARD}\n  {PRINT.replace('xla_ffi_python_cpu_callback', 'my_kernel')}", [1, 1]),
    # read by nothing
    (RESHARD, [1]),
])
def test_a_reshard_onto_a_device_for_anything_else_is_mpmd(body, ops):
    assert kind(spmd(body=body)) == (True, ops, [])


def test_a_reshard_onto_a_device_that_is_returned_is_mpmd():
    text = spmd(body=RESHARD).replace("return %r", "return %b")
    assert kind(text) == (True, [1], [])


def test_the_propagated_pure_callback_module_is_spmd():
    assert places_on_devices(parse_module(PROPAGATED)) is False


def test_simulate_of_the_full_inserts_output_on_a_debug_print_program(tmp_path):
    propagated = optimize_text(DEBUG_PRINT, "p.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    full = optimize_text(propagated, "p.mlir", parse_flags(["--sdy-insert-explicit-reshards=enable-full-version=true"]))
    assert "sdy.reshard %2 <@maximal_mesh_0, []>" in full, full   # (the callback's operand onto device 0)
    assert places_on_devices(parse_module(full)) is False
    path = tmp_path / "full.mlir"
    path.write_text(full)
    r = CliRunner().invoke(main, ["simulate", str(path)])
    assert r.exit_code == 0, r.output
    assert "PASS: sharded and unsharded results agree" in r.output
    assert f"not executed: custom_call @xla_ffi_python_cpu_callback at {path}:" in r.output
