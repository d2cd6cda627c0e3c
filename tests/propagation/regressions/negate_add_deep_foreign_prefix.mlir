// FLAGS: -sdy-propagation-pipeline
// concat_deep_foreign_prefix one op away: %0 = negate %arg0 holds y,x,z
// when the add sees %arg1's x,y,z,a (core.dl: own_prefix).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "a"}p2, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<64x4xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<64x4xf32>
  return %1 : tensor<64x4xf32>
}
