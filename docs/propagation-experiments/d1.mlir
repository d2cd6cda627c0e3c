sdy.mesh @mesh = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}) -> (tensor<6x8xf32>, tensor<48xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<6x8xf32>
  %1 = stablehlo.reshape %arg0 : (tensor<6x8xf32>) -> tensor<48xf32>
  return %0, %1 : tensor<6x8xf32>, tensor<48xf32>
}
