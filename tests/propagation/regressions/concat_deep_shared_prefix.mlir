// FLAGS: -sdy-propagation-pipeline
// %arg0 (b,x,z,a) and %arg1 (b,x,z,a,y) propose the same units at 0 .. 3;
// %arg1's "y" at position 4 chains onto the prefix both hold (core.dl:
// own_prefix from any source holding it).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "z", "a", ?}p0, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "z", "a", "y"}p0, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x"}p0, {?}]>}) -> tensor<64x12xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<64x4xf32>, tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x12xf32>
  return %0 : tensor<64x12xf32>
}
