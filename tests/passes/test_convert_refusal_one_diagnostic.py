"""A refusal of convert-global-to-local is one located diagnostic (issue 18).

Before, after sdylog's own error at the op came a second line at the same
place, "failed to legalize operation ... that was explicitly marked
illegal" (what MLIR's conversion framework adds, which Shardy's lit cases
expect with -verify-diagnostics): now one line says both."""
from __future__ import annotations

import subprocess
import sys

import pytest

CONCAT = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = stablehlo.concatenate %arg0, %arg0, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
"""

EMPTY_REDUCE_SCATTER = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = sdy.reduce_scatter [{}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


@pytest.mark.parametrize("text,op,why", [
    (CONCAT, "stablehlo.concatenate", "dimension 0 is sharded but the concatenation is on this dimension."),
    (EMPTY_REDUCE_SCATTER, "sdy.reduce_scatter", "a reduce_scatter without axes should have been removed"),
])
def test_one_located_error(tmp_path, text, op, why):
    path = tmp_path / "refused.mlir"
    path.write_text(text)
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "opt", str(path), "-sdy-convert-global-to-local"],
                       capture_output=True, text=True)
    assert p.returncode == 1 and p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"{path}:3:8: error: {why}")
    # (the text Shardy's lit cases expect is in it)
    assert f"failed to legalize operation '{op}' that was explicitly marked illegal" in lines[0]
