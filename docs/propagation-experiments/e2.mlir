sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>) {
  %0 = stablehlo.reshape %arg0 : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.transpose %0, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.convert %1 : tensor<8x8xf32>
  %c = stablehlo.constant dense<0.0> : tensor<8x8xf32>
  %3 = stablehlo.add %2, %c : tensor<8x8xf32>
  %c1 = stablehlo.constant dense<1.0> : tensor<4xf32>
  %c2 = stablehlo.constant dense<2.0> : tensor<4xf32>
  %4 = stablehlo.add %c1, %c2 : tensor<4xf32>
  %5 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
  return %3, %5, %5, %4 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>
}
