// FLAGS: -sdy-aggressive-propagate=propagation-strategy=basic-then-aggressive
// Basic then aggressive: %arg1's closed empty dimension 0 and %arg0's closed
// dimension 1 stop the basic strategy; the aggressive run after it takes "x"
// and "y","z" into the product (a unit offered in a basic phase is offered
// again, and not dropped for its earlier offer). Was: basic-only output.
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y"}, {?}]>}, %arg1: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", "z", ?}, {?}]>}) -> tensor<4x8x8xf32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<4x8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<4x8x8xf32>
  return %1 : tensor<4x8x8xf32>
}
