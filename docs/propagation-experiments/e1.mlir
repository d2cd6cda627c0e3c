sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
  %2 = stablehlo.negate %0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
