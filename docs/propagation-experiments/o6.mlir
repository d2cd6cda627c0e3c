sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%B: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}, %q: tensor<8x8xf32>, %A: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %x = stablehlo.add %q, %A : tensor<8x8xf32>
  %y = stablehlo.negate %x : tensor<8x8xf32>
  %z = stablehlo.negate %y : tensor<8x8xf32>
  %u = stablehlo.add %z, %B : tensor<8x8xf32>
  return %u : tensor<8x8xf32>
}
