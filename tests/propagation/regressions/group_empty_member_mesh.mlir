// FLAGS: -sdy-basic-propagate
// A sharding group whose only sharded member says nothing (@mesh, [{?}]) is
// still on @mesh: the minimum reading it and a value on @mesh_1 propagates
// nothing (shrunk from generated program seed 44).
sdy.mesh @mesh = <["x"=2, "z"=2]>
sdy.mesh @mesh_1 = <["x"=8]>
func.func @main(%arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}]>}) -> (tensor<4xf32>, tensor<4xf32>) {
  %v4 = stablehlo.maximum %arg1, %arg1 : tensor<4xf32>
  sdy.sharding_group %arg1 group_id=0 : tensor<4xf32>
  sdy.sharding_group %v4 group_id=0 : tensor<4xf32>
  %v18 = stablehlo.minimum %arg1, %v4 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{"x", ?}]>]>} : tensor<4xf32>
  return %v18, %v4 : tensor<4xf32>, tensor<4xf32>
}
