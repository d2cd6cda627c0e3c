sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"a", ?}, {?}]> : tensor<8x8xf32>
  %4 = stablehlo.negate %arg2 : tensor<8x8xf32>
  %5 = sdy.sharding_constraint %4 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %6 = stablehlo.add %4, %4 : tensor<8x8xf32>
  return %1, %3, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
