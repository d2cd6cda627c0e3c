// FLAGS: -sdy-propagation-pipeline
// concat_deep_foreign_prefix through a dot (its lhs non-contracting factor) and an add
// (core.dl: own_prefix).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]>

func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z", ?}p1, {?}]>},
    %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>},
    %arg2: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "a"}p2, {?}]>}) -> tensor<64x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<64x16xf32>
  return %1 : tensor<64x16xf32>
}
