// pipeline: %arg0 has two uses at k = 0 until the dead add goes
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<2x2xf32>) -> tensor<1x2xf32> {
  %0 = stablehlo.add %arg1, %arg0 : tensor<2x2xf32>
  %1 = stablehlo.negate %0 : tensor<2x2xf32>
  %2 = stablehlo.slice %arg0 [0:1, 0:2] : (tensor<2x2xf32>) -> tensor<1x2xf32>
  return %2 : tensor<1x2xf32>
}
