"""Convolutions whose kernel window is larger than the windows they make
(conv_window_programs.py), their result sharded on that spatial dimension:
partitioned and simulated equal to the unpartitioned run.

The rule of such a dimension has one factor, the window's (a reduction
factor shared by the input and the kernel), which the result lacks: the
insert pass gathers the input there, and the result kept its axes with no
factor to clear, which convert-global-to-local refused ("dimension 1 is
sharded but is not a pass-through dimension"). resolve-permutation-factors
now clears that result dimension too (rules/partition/permutation.dl): the
convolution runs on the gathered input and each device keeps its block of
the result (an all_slice, no data moved). XLA's compiled program gathers
the input the same way when the halo would span more than a neighbour's
block (all-gather only: the kernels of 5 and 7 rows on blocks of one row);
with a halo within one neighbour (residual_h2_k3) it exchanges the halo
instead (collective-permute), where sdylog still gathers.

A convolution that makes no window (its window longer than its padded
input: an empty result) has its window dimensions cleared too, and
pad-for-divisibility counts its windows as none (it counted -1 and refused
it: "fewer windows than its result's padded size")."""
from __future__ import annotations

from pathlib import Path

import pytest

from sdylog.simulate.simulate import simulate_text
from tests.jax_subprocess import generated_programs

HERE = Path(__file__).parent
NAMES = ["residual_h4_k5", "residual_h4_k7", "residual_h2_k3", "residual_hw_k7", "residual_grad_h4_k5",
         "two_layers_grad_h2_k3", "residual_strided", "empty_second_layer", "empty_dilated"]
# XLA's collective names, as sdylog's report names them
KINDS = {"all-gather": "all_gather", "all-reduce": "all_reduce", "collective-permute": "collective_permute",
         "all-to-all": "all_to_all", "reduce-scatter": "reduce_scatter"}


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "conv_window_programs.py")


def test_every_program_is_tested(programs):
    assert sorted(programs) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_simulated_equal(programs, name):
    report = simulate_text(programs[name]["text"], f"{name}.mlir")
    assert report.partitioned
    assert report.ok, report.difference


@pytest.mark.parametrize("name", ["residual_h4_k5", "residual_h4_k7"])
def test_gathers_as_xla_does(programs, name):
    """A halo wider than a block: XLA's program and sdylog's move data
    with all-gathers alone, the same bytes (the input, 3/4 of it received)."""
    report = simulate_text(programs[name]["text"], f"{name}.mlir")
    moving = {c["kind"] for c in report.collectives if c["bytes_per_device"] > 0}
    assert moving == {KINDS[k] for k in programs[name]["xla"]} == {"all_gather"}
    assert sum(c["bytes_per_device"] for c in report.collectives) == 2 * 4 * 3 * 2 * 4 * 3 // 4
