// -sdy-basic-propagate (and the pipeline): users revisited in program order
sdy.mesh @mesh = <["x"=2, "w"=2]>
func.func @main(%arg0: tensor<16x16xf32>) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}, tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", "x", ?}, {}]>}) {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = stablehlo.negate %arg0 : tensor<16x16xf32>
  %2 = stablehlo.subtract %1, %0 : tensor<16x16xf32>
  %3 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %4 = stablehlo.multiply %1, %2 : tensor<16x16xf32>
  return %3, %4 : tensor<16x16xf32>, tensor<16x16xf32>
}
