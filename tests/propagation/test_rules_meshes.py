"""Meshes (rules/propagation/visits.dl, `visit_mesh`; core.dl, the marker
row and the `mesh_apart` tie of `op_unit`; tensors.dl, `tensor_mesh`): a
tensor is on one mesh, and a visit whose tensors are on two meshes
(Shardy's getCommonMeshName fails) proposes nothing. The expected
shardings are Shardy's (shared/conformance/shardy_ref_opt.py gives the
same)."""
import pytest

from rules_probe import AGGRESSIVE, BASIC, Derived

TWO_MESHES = """
sdy.mesh @mesh = <["x"=2]>
sdy.mesh @mesh_1 = <["y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


@pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])
def test_a_visit_across_two_meshes_proposes_nothing(options):
    # each operand's units come at the same rank (the start): the tie drops
    # both, so neither mesh's unit is proposed at the add
    d = Derived(TWO_MESHES, options)
    assert d.proposals("stablehlo.add") == set()
    assert d.sharding("%0") == [[], []]
    assert d.sharding("%1") == [[], []]


ONE_MESH_EACH = """
sdy.mesh @mesh = <["x"=2]>
sdy.mesh @mesh_1 = <["y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


@pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])
def test_a_tensor_takes_the_mesh_of_its_first_sharding(options):
    # %0 gets "x" on @mesh from %arg0 at the negate; the add then meets
    # %0 on @mesh and %arg1 on @mesh_1: it proposes nothing
    d = Derived(ONE_MESH_EACH, options)
    assert d.sharding("%0") == [["x"], []]
    assert d.proposals("stablehlo.add") == set()
    assert d.sharding("%1") == [[], []]


EMPTY_ON_ONE_MESH = """
sdy.mesh @mesh = <["x"=2]>
sdy.mesh @mesh_1 = <["y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


@pytest.mark.parametrize("options", [BASIC, AGGRESSIVE], ids=["basic", "aggressive"])
def test_a_unit_of_another_mesh_than_an_empty_sharding_is_not_proposed(options):
    # %arg0's sharding is empty but names @mesh; %0 gets "y" of @mesh_1 by
    # propagation (the negate): no unit of %arg0 cuts it at the add, so only
    # mesh_excluded keeps the add from proposing it
    d = Derived(EMPTY_ON_ONE_MESH, options)
    assert d.sharding("%0") == [["y"], []]
    assert d.proposals("stablehlo.add", "op_unit") == set()
    assert d.sharding("%1") == [[], []]
