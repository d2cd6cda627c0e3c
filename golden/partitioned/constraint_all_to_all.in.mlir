// A sharding constraint that moves "x" from the rows to the columns: one
// all-to-all.
sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %a : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<8x8xf32>
  %2 = stablehlo.exponential %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
