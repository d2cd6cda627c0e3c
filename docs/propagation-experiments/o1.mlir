sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%argA: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %argB: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<8x8xf32>) {
  %a1 = stablehlo.negate %argA : tensor<8x8xf32>
  %t = stablehlo.negate %a1 : tensor<8x8xf32>
  %b1 = stablehlo.negate %argB : tensor<8x8xf32>
  %b2 = stablehlo.negate %b1 : tensor<8x8xf32>
  %u = stablehlo.add %t, %b2 : tensor<8x8xf32>
  return %u : tensor<8x8xf32>
}
