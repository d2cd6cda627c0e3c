// Rows that "x" does not divide (6 over 4 devices): the replicated input is
// padded to 8 rows and sliced, the rows are reduced (the padding holds
// zeros) and the partial sums all-reduced.
sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = sdy.sharding_constraint %a <@mesh, [{"x"}, {}]> : tensor<6x8xf32>
  %1 = stablehlo.abs %0 : tensor<6x8xf32>
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
