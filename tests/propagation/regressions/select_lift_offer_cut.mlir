// FLAGS: -sdy-propagation-pipeline
// Written by hand (d31): %arg2 holds y,a,z,x from round p0 and is the select's
// first tensor (source order 0); %arg1 refuses them in p0 (its dimension
// waits for p1) and is offered them again at the select's turn in p1, the
// phase in which %arg0 brings b at position 3. Shardy: compatible axes y,a,z
// (x and b conflict), %arg1 gets z only. The offer must come after the turn's
// reads (core.dl: LIFT_ORDER), else the cut that b makes comes too late.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "b"}p1, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", ?}p1, {?}]>},
    %arg2: tensor<64x4xi1> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "x", ?}p0, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.select %arg2, %arg1, %arg0 : tensor<64x4xi1>, tensor<64x4xf32>
  return %0 : tensor<64x4xf32>
}
