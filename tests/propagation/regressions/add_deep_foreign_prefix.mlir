// FLAGS: -sdy-propagation-pipeline
// concat_deep_foreign_prefix through an add: %arg1's "a" (after its own
// x,y,z) must not follow %arg0's y,x,z (core.dl: own_prefix).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "a"}p2, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  return %0 : tensor<64x4xf32>
}
