// FLAGS: -sdy-propagation-pipeline
// Generated (reviewer r1, fy77_9): %arg2 holds b,x from round p0; in round p1
// %arg0 brings b,x,y and %arg1 a,x,y,b (a conflicts with b at position 0).
// Shardy keeps b,x; sdylog appends y.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "y", ?}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", "y", "b", ?}p1, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", ?}p0, {?}]>}) -> tensor<64x12xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<64x4xf32>, tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x12xf32>
  return %0 : tensor<64x12xf32>
}
