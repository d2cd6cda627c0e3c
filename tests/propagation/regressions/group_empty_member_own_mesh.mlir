// FLAGS: -sdy-propagation-pipeline
// %v34's group mate %arg20 has an empty sharding on @mesh_1, yet the negate
// gives %v34 "x" on @mesh (Shardy reads the member's own sharding, none) and
// the group takes it. Shrunk from generated program seed 60 (tests/generators/shrink.py).
sdy.mesh @mesh = <["y"=4, "x"=4]>
sdy.mesh @mesh_1 = <["z"=2, "x"=8]>
func.func @main(%arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}]>}, %arg2: tensor<8x2x4xf32>, %arg3: tensor<2xf32>, %arg6: tensor<8x4x2xf32>, %arg17: tensor<4x2xf32>, %arg20: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{?}]>}, %arg27: tensor<8x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x":(1)2, "z"}p1, {}, {}]>}, %arg49: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x1x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", "y":(2)2}, {?}]>}) {
  %v30 = stablehlo.maximum %arg1, %arg1 : tensor<8xf32>
  %v34 = stablehlo.negate %v30 : tensor<8xf32>
  sdy.sharding_group %v34 group_id=0 : tensor<8xf32>
  sdy.sharding_group %arg20 group_id=0 : tensor<8xf32>
  %v39 = stablehlo.broadcast_in_dim %v30, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %v40 = stablehlo.broadcast_in_dim %v39, dims = [0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y":(1)2, ?}, {?}]>]>} : (tensor<8x4xf32>) -> tensor<8x2x4xf32>
  %v41 = stablehlo.slice %v40 [0:8, 1:2, 0:4] : (tensor<8x2x4xf32>) -> tensor<8x1x4xf32>
  return %v41 : tensor<8x1x4xf32>
}
