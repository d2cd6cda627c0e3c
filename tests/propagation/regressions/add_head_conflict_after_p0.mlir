// FLAGS: -sdy-propagation-pipeline
// Generated (reviewer r1, fy78_3): %arg1 holds a,x from round p0; in round p1
// %arg2 brings y at position 0 and %arg0 brings a,x,z. Shardy keeps a,x on
// the adds; sdylog appends z.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", "z", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", ?}p0, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", ?}p1, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<64x4xf32>
  return %1 : tensor<64x4xf32>
}
