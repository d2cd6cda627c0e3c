// FLAGS: -sdy-basic-propagate
// Shardy rebuilds a sharding propagation writes from its factors, without
// priorities: %0 gets "x" and loses p0 and p1 on both dimensions; %1, which
// nothing reaches, keeps its p0 (generated programs, basic propagation).
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}p0, {?}p1]>]>} : tensor<8x8xf32>
  %1 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}p0, {}]>]>} : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
