// FLAGS: -sdy-propagation-pipeline
// A proposal "y","x","a" from %arg1 (priority p1) where %arg0 holds "a","x":
// the result takes "y","x" only, %arg0 gets a reshard (Shardy). Before the
// proposal's vv was checked (9eef2d4) the result took "y","x","a". From
// review r3 (dup1).
module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2]>

  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", ?}p0, {?}]>},
                  %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "a", ?}p1, {?}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x", ?}p1, {?}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
