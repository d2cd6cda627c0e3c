"""The JAX programs of jax_programs.py (issue 18's refusals: a
dynamic_update_slice at a constant offset on sharded rows, the weight
gradients of a conv net with its images sharded on spatial dimensions,
reshapes merging padded rows; kernel gradients of transposed, strided and
grouped convolutions with their images sharded on H or W) partitioned and
simulated equal the unpartitioned run."""
from __future__ import annotations

from pathlib import Path

import pytest

from sdylog.simulate.simulate import simulate_text
from tests.jax_subprocess import generated_programs

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def programs():
    return generated_programs(HERE / "jax_programs.py")


@pytest.mark.parametrize("name", ["dus_constant", "dus_in_dim", "cnn_grad_hw", "cnn_grad_h", "reshape_merged",
                                  "reshape_split_merged", "transposed_conv_grad_h", "strided_double_grad_w",
                                  "grouped_conv_grad_h", "depthwise_conv_grad_w"])
def test_simulated_equal(programs, name):
    report = simulate_text(programs[name], f"{name}.mlir")
    assert report.partitioned
    assert report.ok, report.difference
