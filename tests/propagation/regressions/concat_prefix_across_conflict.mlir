// FLAGS: -sdy-propagation-pipeline
// In round p1 the concatenate's compatible axes for dimension 0 chain "a" (from
// %arg0, round p0) with "x","a","z" (from %arg1, whose position 0 is "y"): the
// proposal a,x,a,z crosses a position where %arg1 and %arg2 conflict with it.
// %arg2 (b,x,a) holds "a" then "x" before position 3, as the proposal does;
// Shardy updates a tensor only when its axes are a prefix of the new ones
// (b,x,a is not a prefix of a,x,a,z) and leaves %arg2 as it is. A write that
// checked only the two units before it gave %arg2 "z" (dup2,
// /work/rev27/r3/dup2.mlir); core.dl's prefix_held checks the units before
// those where four units or more of a mesh are in the shardings (PREFIX_AGREES).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", ?}p0, {?}]>},
                %arg1: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "a", "z", ?}p1, {?}]>},
                %arg2: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "a", ?}p1, {?}]>}) -> tensor<32x12xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<32x4xf32>, tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x12xf32>
  return %0 : tensor<32x12xf32>
}
