// FLAGS: -sdy-propagation-pipeline
// A concatenate and a reshape of one argument: sdylog failed with 'rank-ordered rules
// must not lower ranks' (the reshape's second factor waited for the unit ending its
// first one, which came in a later op-priority phase). From ../shared/conformance/repros.
sdy.mesh @mesh = <["y"=2, "x"=2]>
func.func @main(%arg0: tensor<2x2xf32>) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, tensor<4xf32>) {
  %1 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.reshape %arg0 : (tensor<2x2xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<4x2xf32>, tensor<4xf32>
}
