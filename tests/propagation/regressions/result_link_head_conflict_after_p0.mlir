// FLAGS: -sdy-propagation-pipeline
// Found by a focused fuzz (d31, seed 484), minimized: %0 and %arg0 hold x,y
// from round p0 (%arg1 is closed); in p1 main's result slot brings a,y,z
// (closed), a conflicting with x at position 0. Shardy: nothing crosses the
// result link, %arg0 and %0 keep x,y; the rules cut the link's proposals after
// the conflict as any visit's (core.dl: LINK_ACTION, a link's units are
// present too), else "z" chained onto the "y" held since p0.
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}p0, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}]>})
    -> (tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "y", "z"}p1, {?}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  return %0 : tensor<64x4xf32>
}
