"""`sdy.replicated_to_unreduced` and `sdy.sharded_to_unreduced` written in
a module run in the simulator (issue 18).

Before: `sdylog simulate` of a module that already holds one (an explicit
module, as `-sdy-export-pipeline=enable-insert-explicit-collectives=true`
writes it) failed with "the simulator cannot execute
'sdy.replicated_to_unreduced'": its unpartitioned run had no lowering of
them. In the global view both are identities on values (Shardy's op docs:
`all_reduce . replicated_to_unreduced = id`, `all_reduce .
sharded_to_unreduced = all_gather`; partitioning.md 7); on a device, as
convert-global-to-local lowers them."""
from __future__ import annotations

import numpy as np
import pytest

from sdylog.ir.module import parse_module
from sdylog.partition import ir_shardings as irs
from sdylog.partition.shards import shard_slices
from sdylog.model.mesh import meshes_of_module
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.mesh import DeviceRun, run_on_devices
from sdylog.simulate.program import Program
from tests.simulate.generated_simulations import M22, simulated

R2U = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>}) {
  %0 = sdy.replicated_to_unreduced {"x"} %arg0 out_sharding=<@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""

S2U = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}], unreduced={"x"}>}) {
  %0 = sdy.sharded_to_unreduced [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}"""

# Both, then reduced again: the value comes back whole.
BOTH_REDUCED = M22 + """func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = sdy.sharded_to_unreduced [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {}], unreduced={"x"}> : tensor<8x4xf32>
  %1 = sdy.replicated_to_unreduced {"y"} %0 out_sharding=<@mesh, [{}, {}], unreduced={"x", "y"}> : tensor<8x4xf32>
  %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"x", "y"}>]>} : tensor<8x4xf32>
  %3 = sdy.all_reduce {"x", "y"} %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}"""


@pytest.mark.parametrize("name,text", [("r2u", R2U), ("s2u", S2U), ("both", BOTH_REDUCED)])
def test_simulate_runs_a_module_holding_the_unreduced_ops(name, text):
    report = simulated(text, f"{name}.mlir")
    assert not report.partitioned   # (taken as written: its collectives are explicit)
    kinds = [c["kind"] for c in report.collectives]
    assert ("replicated_to_unreduced" in kinds) == ("replicated_to_unreduced" in text)
    assert ("sharded_to_unreduced" in kinds) == ("sharded_to_unreduced" in text)


def _per_device(text: str, convert: bool) -> list[np.ndarray]:
    """Each device's result of @main, on its shard of one input: the ops as
    written run by the simulator on every device, or the program
    convert-global-to-local makes of them."""
    if convert:
        text = optimize_text(text, "t.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    module = parse_module(text, "t.mlir")
    with module.context:
        func = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        sharding = irs.func_arg_sharding(func, 0)
        mesh = irs.resolve_mesh(sharding, meshes_of_module(module))
        x = np.arange(32, dtype=np.float32).reshape(8, 4) + 1   # (no zeros)
        runs = [[DeviceRun("main", [x[shard_slices(x.shape, sharding, mesh, d)]]) for d in range(mesh.num_devices)]]
        return [r[0] for r in run_on_devices(Program(module, "t.mlir"), runs)[0]]


@pytest.mark.parametrize("text", [R2U, S2U], ids=["r2u", "s2u"])
def test_on_devices_the_ops_hold_what_convert_lowers_them_to(text):
    """On a simulated mesh (interpreter.run_parallel, a manual body) each
    device's part is what the per-device program convert-global-to-local
    makes computes: the leader's value or zeros (r2u), the shard in place
    in zeros (s2u)."""
    written, lowered = _per_device(text, False), _per_device(text, True)
    for d, (a, b) in enumerate(zip(written, lowered)):
        assert a.shape == b.shape and np.array_equal(a, b), (d, a, b)
    assert (written[-1] == 0).any()   # (the last device, x = 1, holds zeros)


@pytest.mark.parametrize("text", [R2U, S2U], ids=["r2u", "s2u"])
def test_their_results_carry_their_out_sharding(text):
    """ir_shardings reads a result's sharding from the op's out_sharding, as
    for the other sdy collectives (before: none, and
    rules/partition/reduction_kind.dl had to tell these results apart from
    values with no sharding itself)."""
    module = parse_module(text, "t.mlir")
    with module.context:
        func = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        op = func.regions[0].blocks[0].operations[0]
        assert irs.sharding_of(op.results[0]) == irs.func_result_sharding(func, 0)
