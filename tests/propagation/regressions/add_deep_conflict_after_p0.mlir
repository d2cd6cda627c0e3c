// FLAGS: -sdy-propagation-pipeline
// Generated (reviewer r1, fy77_35): %arg2 holds y,a,z,x (open) from round p0;
// in round p1 %arg0 brings y,a,z,b (closed). Shardy stops at y,a,z where
// b and x conflict; sdylog keeps x after them on one value.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "b"}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", ?}p1, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "x", ?}p0, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<64x4xf32>
  return %1 : tensor<64x4xf32>
}
