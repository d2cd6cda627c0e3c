sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %5 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
  %6 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %arg0 : tensor<8x8xf32>
}
