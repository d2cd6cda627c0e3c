sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%x: tensor<8x8xf32>, %A: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %B: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %y = stablehlo.negate %x : tensor<8x8xf32>
  %u = stablehlo.add %y, %B : tensor<8x8xf32>
  %w = stablehlo.add %x, %A : tensor<8x8xf32>
  return %u, %w : tensor<8x8xf32>, tensor<8x8xf32>
}
