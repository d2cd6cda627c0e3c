// Two meshes with the same axes and different device orders. The add
// works on the mesh most of its sharded tensors use (@mesh_rev: the
// second operand and the result); the first operand, sharded on @mesh,
// is resharded onto it although its axes already fit.
sdy.mesh @mesh = <["x"=2, "y"=2]>
sdy.mesh @mesh_rev = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_rev, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_rev, [{"x"}, {}]>}) {
  %0 = stablehlo.add %a, %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh_rev, [{"x"}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
