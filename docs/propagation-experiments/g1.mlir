sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %2 = stablehlo.negate %1 : tensor<8x8xf32>
  sdy.sharding_group %0 group_id = 7 : tensor<8x8xf32>
  sdy.sharding_group %2 group_id = 7 : tensor<8x8xf32>
  return %0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
