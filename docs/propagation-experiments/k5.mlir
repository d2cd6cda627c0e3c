sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"b", ?}, {?}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
