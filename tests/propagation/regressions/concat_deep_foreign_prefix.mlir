// FLAGS: -sdy-propagation-pipeline
// In round p2 %arg1 proposes x,y,z,a; its "x" and "y" are cut by %arg0's
// y,x,z (round p1), and its "a" chained onto the "z" %arg0 proposed at
// position 2, forming y,x,z,a, which %arg0 (holding y,x,z) then took.
// Shardy keeps y,x,z everywhere: a proposal at a deep position goes after
// the proposer's own units only (core.dl: own_prefix).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "a"}p2, {?}]>}) -> tensor<64x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}
