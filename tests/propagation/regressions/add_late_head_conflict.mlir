// FLAGS: -sdy-propagation-pipeline
// fy5_26 (fuzzed), minimized: %1 holds "x" from round p0; in round p1
// %arg2 brings "a" to position 0 and %0 brings "x","z". Shardy compatible
// axes at %1 stop at the conflict at position 0 (nothing after it); sdylog
// keeps the earlier "x" (the later "a" is cut) and chains "z" onto it.
sdy.mesh @mesh = <["a"=2, "x"=2, "z"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z"}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<64x4xf32>
  return %1 : tensor<64x4xf32>
}
