// A batched matmul: the batch factor takes "x" from the lhs (the rhs and the
// result get it), the contracting factor "y" from the rhs (the lhs gets it,
// the result does not hold that factor: a reduction), and the rhs's
// non-contracting dimension stays unsharded.
sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @main(%lhs: tensor<2x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}, {?}]>},
                %rhs: tensor<2x32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y"}, {?}]>}) -> tensor<2x16x8xf32> {
  %0 = stablehlo.dot_general %lhs, %rhs, batching_dims = [0] x [0], contracting_dims = [2] x [1]
      : (tensor<2x16x32xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
  %1 = stablehlo.negate %0 : tensor<2x16x8xf32>
  return %1 : tensor<2x16x8xf32>
}
