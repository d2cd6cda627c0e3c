sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%p: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y1 = stablehlo.negate %p : tensor<8x8xf32>
  %y2 = stablehlo.transpose %p, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = stablehlo.add %y1, %y2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}
