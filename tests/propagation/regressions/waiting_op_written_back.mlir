// FLAGS: -sdy-propagation-pipeline
// KNOWN DIFFERENCE: docs/propagation-semantics.md 14.5, "an op waiting in the worklist keeps its place"
// At k = 1 the tanh's visit writes "z" into dim 0 of %arg0; the transpose puts it in
// dim 1 of %0 and pushes the subtract and the abs. The abs runs first; its cascade
// (the add, then the transpose %3 backwards) writes "z" into dim 0 of %2 while the
// subtract still waits, so Shardy's subtract meets a conflict and keeps %2 = dim 0.
// The rules let the subtract react to %0 when it arrives: %2 gets dim 1. Shrunk
// from generated program seed 17 (300 ops) with tests/generators/shrink.py, then
// by hand.
sdy.mesh @mesh = <["z"=4]>
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.abs %0 : tensor<8x8xf32>
  %2 = stablehlo.subtract %1, %0 : tensor<8x8xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.add %1, %3 : tensor<8x8xf32>
  %5 = stablehlo.tanh %arg0 : tensor<8x8xf32>
  %6 = sdy.sharding_constraint %5 <@mesh, [{"z"}, {}]> : tensor<8x8xf32>
  return %4, %6 : tensor<8x8xf32>, tensor<8x8xf32>
}
