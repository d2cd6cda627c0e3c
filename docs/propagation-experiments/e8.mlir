// -sdy-basic-propagate: the dead negate propagates before it goes; pipeline: not (k = 0 only)
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg2: tensor<8x12x4xf32>) -> (tensor<8x12x4xf32>) {
  %21 = sdy.constant dense<1.000000e+00> : tensor<8x4x8xf32>
  %22 = stablehlo.dot_general %arg2, %21, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x12x4xf32>, tensor<8x4x8xf32>) -> tensor<8x12x8xf32>
  %23 = stablehlo.negate %22 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}]>]>} : tensor<8x12x8xf32>
  %24 = stablehlo.sqrt %23 : tensor<8x12x8xf32>
  return %arg2 : tensor<8x12x4xf32>
}
