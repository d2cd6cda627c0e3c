sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %z: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) -> tensor<8x8xf32> {
  %y = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %w = stablehlo.add %y, %z : tensor<8x8xf32>
  return %w : tensor<8x8xf32>
}
