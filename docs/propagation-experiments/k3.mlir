sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %n = stablehlo.negate %c : tensor<8x8xf32>
  %0 = stablehlo.add %n, %n : tensor<8x8xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<8x8xf32>
  return %1, %n : tensor<8x8xf32>, tensor<8x8xf32>
}
