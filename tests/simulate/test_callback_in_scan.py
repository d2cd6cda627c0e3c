"""A jax.pure_callback inside lax.scan (callback_programs.py pure_in_scan)
is partitioned as XLA runs it, not refused.

JAX outlines the scan body into `@closed_call`, which returns the callback's
result, placed on device 0 (`<@maximal_mesh_0, []>`). Shardy's
propagate-to-func-results copies that sharding to the callee's result, and
its own insert-explicit-reshards (since 2026-08-18, openxla/shardy 5716fd20)
then refuses every function with a single-device result: "'func.func' op
function result 1 cannot have a single-device (maximal) sharding
attribute". jaxlib's older Shardy has no such check, and XLA (which inlines
the call) runs the callback once on device 0 with its whole operand and
broadcasts its result. sdylog leaves a maximal sharding off a callee's
result (sdylog/passes/propagate_to_func_results.py): the callee returns the
value insert-explicit-reshards makes of the op's result, replicated on the
global mesh.

The simulator cannot call the callback: the structure of the per-device
program is checked against XLA's HLO, and a variant with the callback
replaced by a pure op on device 0 is simulated.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from jaxlib.mlir import ir

from sdylog.ir.walk import walk_ops
from sdylog.simulate.simulate import simulate_text
from tests.jax_subprocess import generated_programs
from tests.run_partition import partitioned
from tests.simulate.test_host_callbacks import CALLBACK, callbacks, on_device

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def program():
    return generated_programs(HERE / "callback_programs.py")["pure_in_scan"]


def _on_device_0(text: str) -> str:
    """The module with its callback replaced by a multiply of its operand
    by itself, kept on device 0 (its `sdy.sharding`)."""
    pattern = (r"stablehlo\.custom_call @" + CALLBACK + r"\((%\w+)\) \{[^\n]*?"
               r"(sdy\.sharding = #sdy\.sharding_per_value<\[<@maximal_mesh_0, \[\]>\]>)\} : "
               r"\((tensor<[^>]*>)\) -> tensor<[^>]*>")
    out, n = re.subn(pattern, r"stablehlo.multiply \1, \1 {\2} : \3", text)
    assert n == 1
    return out


def test_partitions_with_the_callback_once_on_device_0_as_xla_runs_it(program, tmp_path):
    (xla,) = program["xla"]
    assert xla["guarded"] and xla["partition_id"], xla
    module = partitioned(tmp_path, "pure_in_scan", program["mlir"])
    with module.context:
        (op,) = callbacks(module)
        assert on_device(op) == 0
        assert [list(ir.RankedTensorType(v.type).shape) for v in op.operands] == xla["operand_shapes"]
        # inside the scan body's function, its result broadcast to every device
        func = op.parent.parent
        while func.name != "func.func":
            func = func.parent
        assert ir.StringAttr(func.attributes["sym_name"]).value == "closed_call"
        branch = op.parent
        (use,) = [u for u in walk_ops(func) if any(v == branch.results[0] for v in u.operands)]
        assert use.name == "stablehlo.all_reduce"


def test_propagation_pipeline_leaves_no_function_result_on_one_device(program):
    from sdylog.passes.driver import optimize_text, parse_flags
    text = optimize_text(program["mlir"], "pure_in_scan.mlir", parse_flags(["-sdy-propagation-pipeline"]))
    signatures = [line for line in text.splitlines() if "func.func" in line]
    assert len(signatures) == 4 and not any("maximal_mesh_0" in s for s in signatures), signatures
    assert "sdy.sharding_per_value<[<@maximal_mesh_0, []>]>" in text   # the callback stays on device 0


def test_with_a_pure_op_on_device_0_simulates_equal(program):
    report = simulate_text(_on_device_0(program["mlir"]), "pure_in_scan_on_device_0.mlir")
    assert report.partitioned and report.ok, report.difference
    assert not report.skipped


def test_the_variant_is_what_the_callback_program_is_without_the_callback(program):
    """The hand-written variant differs from the program in that op only."""
    text = program["mlir"]
    variant = _on_device_0(text)
    assert CALLBACK not in variant and variant.count("maximal_mesh_0, []>]>") == 1
    changed = [(a, b) for a, b in zip(text.splitlines(), variant.splitlines()) if a != b]
    assert len(changed) == 1 and "stablehlo.multiply" in changed[0][1]


def test_the_module_jaxlibs_shardy_propagates_simulates_equal(program):
    """jaxlib's Shardy writes the maximal sharding on @closed_call's result
    and on the call's: propagated again, the variant simulates equal."""
    from tests.passes.passes_oracle import shardy
    propagated = shardy(_on_device_0(program["mlir"]), "sdy-propagation-pipeline")
    assert re.search(r"func\.func private @closed_call\([^\n]*-> \([^\n]*maximal_mesh_0", propagated)
    report = simulate_text(propagated, "pure_in_scan_jaxlib.mlir")
    assert report.partitioned and report.ok, report.difference
