sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>, %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg2: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %w = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %z = stablehlo.negate %w : tensor<8x8xf32>
  %v = stablehlo.add %arg3, %arg2 : tensor<8x8xf32>
  %c = stablehlo.constant dense<0.0> : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
