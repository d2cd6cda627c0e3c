// FLAGS: -sdy-propagation-pipeline
// concat_deep_foreign_prefix at depth 4 on five axes: y,x,z,b against
// x,y,z,b,a; "a" at position 4 must not follow the other's y,x,z,b
// (core.dl: own_prefix, chained over positions 0 .. 3).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z", "b", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "b", "a"}p2, {?}]>}) -> tensor<64x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}
