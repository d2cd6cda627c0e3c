// pipeline: the add sees two meshes and does nothing
sdy.mesh @mesh = <["x"=8]>
sdy.mesh @mesh_1 = <["w"=4, "z"=4]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {"w", ?}]>}, tensor<8x4xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x4xf32>
  %1 = stablehlo.negate %arg1 : tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}
