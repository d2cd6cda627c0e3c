"""Collectives written per device inside manual computations: their groups
read in either form StableHLO writes, and costed by the ring model."""
from sdylog.ir.module import parse_module
from sdylog.partition.collective_costs import module_collectives

_MODULE = """sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{}}]>}}) -> tensor<8x16xf32> {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{}}, {{}}]>] out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{"x", "y"}} (%a: tensor<8x16xf32>) {{
    %1 = "stablehlo.all_reduce"(%a) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {groups}, use_global_device_ids}}> ({{
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %2 = stablehlo.add %l, %r : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }}) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    sdy.return %1 : tensor<8x16xf32>
  }} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}}"""

_DENSE_Y = "dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>"
_AXES_Y = '#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "y">]>'


def _collectives(groups: str) -> list[dict]:
    from jaxlib.mlir import ir
    from sdylog.ir.context import make_context
    with make_context(), ir.Location.unknown():
        return module_collectives(parse_module(_MODULE.format(groups=groups)))


def test_groups_given_as_mesh_axes_cost_what_the_same_dense_groups_cost():
    dense, axes = _collectives(_DENSE_Y), _collectives(_AXES_Y)
    assert dense[0]["bytes_per_device"] > 0
    assert [(c["kind"], c["axes"], c["bytes_per_device"]) for c in axes] == \
        [(c["kind"], c["axes"], c["bytes_per_device"]) for c in dense]
