// -sdy-op-priority-propagate: the concatenate's operands weigh as much as its result
sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<2x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"a"}]>}, %arg1: tensor<2x8x8xf32>) -> tensor<4x8x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<4x8x8xf32>
  %1 = stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c"}, {"a", "b", ?}, {}]>]>} : tensor<4x8x8xf32>
  return %1 : tensor<4x8x8xf32>
}
