// A sharding constraint fixes its result's sharding ("y" on dimension 1) and
// propagation goes on from it in both directions; at export it becomes a
// sdy.reshard.
sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.exponential %a : tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{?}, {"y"}]> : tensor<8x16xf32>
  %2 = stablehlo.log %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
