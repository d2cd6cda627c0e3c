// FLAGS: -sdy-propagation-pipeline
// KNOWN DIFFERENCE: docs/propagation-semantics.md 14.5, "an op waiting in the worklist keeps its place" (and "deeper cascade levels are simultaneous")
// The broadcast's visit shards %3, the reshape's revisit writes "z" into dim 0 of
// %arg0 and pushes its users: the transpose runs first and writes "z" into dim 2 of
// %1 while the maximum still waits, so Shardy's maximum sees both operands at once
// and the tie goes to the smaller source index (operand 0: dim 2). The rules let
// the maximum react to %arg0 first: dim 0. Shrunk from generated program seed 72
// (100 ops; the doubled operands of that program do not matter) with
// tests/generators/shrink.py, then by hand.
sdy.mesh @mesh = <["z"=2]>
func.func @main(%arg0: tensor<16x12x16xf32>) -> (tensor<8x3072xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, tensor<16x12x16xf32>) {
  %1 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<16x12x16xf32>) -> tensor<16x12x16xf32>
  %2 = stablehlo.maximum %1, %arg0 : tensor<16x12x16xf32>
  %3 = stablehlo.reshape %arg0 : (tensor<16x12x16xf32>) -> tensor<3072xf32>
  %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<3072xf32>) -> tensor<8x3072xf32>
  return %4, %2 : tensor<8x3072xf32>, tensor<16x12x16xf32>
}
