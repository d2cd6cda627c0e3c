// FLAGS: -sdy-propagation-pipeline
// The dual of concat_prefix_across_conflict: %arg2 (a,x,y) holds the
// whole prefix of the compatible axes a,x,y,z before position 3 and takes
// "z" there (core.dl: a write at a deep position, 3 with five units listed,
// goes through prefix_held; PREFIX_AGREES must not refuse it).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", ?}p0, {?}]>},
                %arg1: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", "y", "z", ?}p1, {?}]>},
                %arg2: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", "y", ?}p1, {?}]>}) -> tensor<32x12xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<32x4xf32>, tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x12xf32>
  return %0 : tensor<32x12xf32>
}
