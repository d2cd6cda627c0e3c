// FLAGS: -sdy-propagation-pipeline
// KNOWN DIFFERENCE: %arg2 takes "z": a write checks only the two units before it, not the whole prefix
// In round p1 the concatenate's compatible axes for dimension 0 chain "a" (from
// %arg0, round p0) with "x","a","z" (from %arg1, whose position 0 is "y"): the
// proposal a,x,a,z crosses a position where %arg1 and %arg2 conflict with it.
// %arg2 (b,x,a) holds "a" then "x" before position 3, as the proposal does, so it
// takes "z"; Shardy updates a tensor only when its axes are a prefix of the new
// ones (b,x,a is not a prefix of a,x,a,z) and leaves %arg2 as it is. The fix:
// prefix agreement over the whole list (a recursive relation in the ranked
// stratum of core.dl). /work/rev27/r3/dup2.mlir. Tried (s28b): a relation of the
// list's prefix a tensor holds, checked by unit_at past position 1, agrees here
// but costs ~20% of the engine's CPU on transformer_L48 (probably its rule joining every
// unit a tensor gets with the visits that write the tensor), though L48 has no
// list of three units: it needs a cheaper form.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", ?}p0, {?}]>},
                %arg1: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "a", "z", ?}p1, {?}]>},
                %arg2: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "a", ?}p1, {?}]>}) -> tensor<32x12xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<32x4xf32>, tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x12xf32>
  return %0 : tensor<32x12xf32>
}
