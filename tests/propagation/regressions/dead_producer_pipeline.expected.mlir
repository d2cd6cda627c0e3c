module {
  sdy.mesh @mesh = <["x"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x12x4xf32>) -> tensor<8x12x4xf32> {
    return %arg0 : tensor<8x12x4xf32>
  }
}
