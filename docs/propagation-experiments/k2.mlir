sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %s = stablehlo.constant dense<2.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %e = stablehlo.add %c, %b : tensor<8x8xf32>
  %0 = stablehlo.add %arg0, %e : tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %e : tensor<8x8xf32>
  %2 = stablehlo.add %arg2, %e : tensor<8x8xf32>
  return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
