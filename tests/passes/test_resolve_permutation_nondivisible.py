"""-sdy-resolve-permutation-factors on dimensions that are permutations
whatever the rule's factor kind says, or that their sharding does not
divide (issue 18): the partitioned program computes the global result.

- a concatenation's dimension (jnp.roll): its rule's factor is a
  permutation while its operands are slices, which the explicit reshards
  hide (was: refused by -sdy-convert-global-to-local, "the concatenation is
  on this dimension");
- a pad keeping a dimension's size while moving its data (low = -high):
  the rule's factor is pass-through (was: refused, "the pad moves elements
  across shards");
- a reverse (halo path) of one dimension while another is sharded by axes
  that do not divide it (was: invalid IR, the reverse's inferred type).
"""
from __future__ import annotations

import pytest

from sdylog.simulate.simulate import simulate_text

M4 = 'sdy.mesh @mesh = <["x"=4]>\n'

# jnp.roll(x, 2) of 6 elements on "x"=4: two slices concatenated. The
# reshards before the concatenation hide its slices from
# -sdy-resolve-permutation-factors, whose rule then needs replication there.
ROLL = M4 + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<6xf32> {
  %s = stablehlo.slice %a [0:6] : (tensor<8xf32>) -> tensor<6xf32>
  %c = sdy.sharding_constraint %s <@mesh, [{"x"}]> : tensor<6xf32>
  %r = call @roll(%c) : (tensor<6xf32>) -> tensor<6xf32>
  %d = sdy.sharding_constraint %r <@mesh, [{"x"}]> : tensor<6xf32>
  return %d : tensor<6xf32>
}
func.func private @roll(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.slice %arg0 [4:6] : (tensor<6xf32>) -> tensor<2xf32>
  %1 = stablehlo.slice %arg0 [0:4] : (tensor<6xf32>) -> tensor<4xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2xf32>, tensor<4xf32>) -> tensor<6xf32>
  return %2 : tensor<6xf32>
}'''

# A pad that shifts its dimension (low 1, high -1) keeps its size: the
# rule's factor there is pass-through, but the data moves (was: without
# halo exchange, refused by -sdy-convert-global-to-local).
SHIFT = '''sdy.mesh @mesh = <["x"=3]>
func.func @main(%a: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %c = stablehlo.constant dense<1.5> : tensor<f32>
  %p = stablehlo.pad %a, %c, low = [1], high = [-1], interior = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
  return %p : tensor<6xf32>
}'''

# (r32 halo_fail_2_16_True.mlir) a size-1 row padded to size 1 again (low 2,
# high -2, interior 1): all padding, on rows sharded 3 ways, too far for
# the halo exchange (was: refused with and without it).
SHIFT_ONE = '''sdy.mesh @mesh = <["x"=3]>
func.func @main(%arg0: tensor<5x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<1x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %v0 = stablehlo.reverse %arg0, dims = [0] : tensor<5x3xf32>
  %v1 = stablehlo.slice %v0 [3:4, 2:3:2] : (tensor<5x3xf32>) -> tensor<1x1xf32>
  %c = stablehlo.constant dense<1.5> : tensor<f32>
  %v2 = stablehlo.pad %v1, %c, low = [2, -1], high = [-2, 2], interior = [1, 1] : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x2xf32>
  return %v2 : tensor<1x2xf32>
}'''

# The halo path reverses rows sharded on "x" while the columns are sharded
# on "y", which 3 does not divide: its manual computation over "x" had
# columns of 3 on "y"=2.
REVERSE_OTHER_DIM = '''sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<1x3xf32> {
  %s = stablehlo.slice %a [0:1, 0:3] : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %e0 = stablehlo.exponential %s : tensor<1x3xf32>
  %c0 = sdy.sharding_constraint %e0 <@mesh, [{"x"}, {"y"}]> : tensor<1x3xf32>
  %v = stablehlo.sine %c0 : tensor<1x3xf32>
  %r = stablehlo.reverse %v, dims = [0] : tensor<1x3xf32>
  return %r : tensor<1x3xf32>
}'''

CASES = {"roll": ROLL, "shift": SHIFT, "shift_one": SHIFT_ONE, "reverse_other_dim": REVERSE_OTHER_DIM}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("halo", [True, False])
def test_partitioned_program_computes_the_global_result(name, halo):
    report = simulate_text(CASES[name], f"{name}.mlir", seed=7, halo_exchange=halo)
    assert report.ok, report.text()
