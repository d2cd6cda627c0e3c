// FLAGS: -sdy-propagation-pipeline
// %arg2 (c,z,y, round p1) takes no "a" from the proposal x,z,y,a,b of
// round p0, whose own prefix is sound: the tensor-side check (core.dl:
// prefix_held, PREFIX_AGREES) is still needed beside own_prefix.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2, "c"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z", "y", "a", "c", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z", "y", "a", "b"}p0, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", "z", "y", ?}p1, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<64x4xf32>
  return %1 : tensor<64x4xf32>
}
