// -sdy-basic-propagate (also the pipeline): the dead dot never propagates
sdy.mesh @mesh = <["z"=4, "x"=2]>
func.func @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"z"}]>}, %arg1: tensor<4x16xf32>) -> tensor<2x4xf32> {
  %1 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
  return %arg0 : tensor<2x4xf32>
}
