// FLAGS: -sdy-propagation-pipeline
// KNOWN DIFFERENCE: docs/propagation-semantics.md 14.5, "one value in two operand slots for different factors"
// dot_general %arg0, %arg0: dim 1 of %arg0 is factor i through the lhs (result
// dim 0, "w") and factor j through the rhs (result dim 1, "x"). Shardy writes the
// lhs's projection, then the rhs's over it: the negate gets "x" (and %arg0 itself
// ends with no axis there); the rules keep the first, "w". Shrunk from generated
// program seed 68 (300 ops; its `dot_general %v41, %v41`) with
// tests/generators/shrink.py, then by hand.
sdy.mesh @mesh = <["x"=8, "w"=2, "z"=2]>
func.func @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {?}]>}) -> (tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {"x", ?}]>}, tensor<8x2xf32>) {
  %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [0] x [0] : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.negate %arg0 : tensor<8x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<8x2xf32>
}
