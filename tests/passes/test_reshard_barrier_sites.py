"""A value a site reads that is a propagation barrier's result: Shardy reads
its sharding with getSharding there (insertExplicitReshardsToTargetSharding),
not past the barrier, so it has none. (It crashed the writer once: the rules
took the barrier's input sharding as the source, the writer found none on the
value.)"""
from __future__ import annotations

import subprocess
import sys

import pytest

from passes_oracle import ours, same_text, shardy

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>\n'


def barrier_returned(result_sharding: str | None) -> str:
    result = "tensor<8x8xf32>" if result_sharding is None else \
        f"(tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{result_sharding}]>}})"
    return MESH + f"""
func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{"c"}}]>}}) -> {result} {{
  %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}}
"""


CASES = {"no_result_sharding": None, "same_as_input": '{"a"}, {"c"}', "other": '{"b"}, {}'}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("full", [False, True])
def test_barrier_result_at_return_matches_shardy(name, full):
    text = barrier_returned(CASES[name])
    flag = "sdy-insert-explicit-reshards" + ("{enable-full-version=true}" if full else "")
    mine = ours(text, "sdy-insert-explicit-reshards", options={"enable-full-version": full})
    assert same_text(mine, shardy(text, flag)), name


def test_barrier_result_without_sharding_gets_no_reshard():
    mine = ours(barrier_returned(None), "sdy-insert-explicit-reshards", options={"enable-full-version": True})
    assert "sdy.reshard" not in mine


def test_barrier_result_to_a_result_sharding_is_resharded():
    # The barrier's result has no sharding of its own: a reshard to the result's,
    # even though the barrier's input already has it.
    mine = ours(barrier_returned('{"a"}, {"c"}'), "sdy-insert-explicit-reshards",
                options={"enable-full-version": True})
    assert "sdy.reshard %0" in mine


def test_export_with_collectives_on_a_surviving_barrier(tmp_path):
    path = tmp_path / "barrier.mlir"
    path.write_text(barrier_returned(None))
    run = subprocess.run([sys.executable, "-m", "sdylog.cli", "opt", str(path),
                          "-sdy-export-pipeline=enable-insert-explicit-collectives=true"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "sdy.propagation_barrier %arg0" in run.stdout and "sdy.reshard" not in run.stdout
