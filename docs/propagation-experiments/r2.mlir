sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<4x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x8xf32>) {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
