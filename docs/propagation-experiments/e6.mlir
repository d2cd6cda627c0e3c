sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}, {}]>}) -> (tensor<8x8xf32>) {
  %w = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %z = stablehlo.negate %w : tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}
