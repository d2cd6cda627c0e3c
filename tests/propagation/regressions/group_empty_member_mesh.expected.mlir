module {
  sdy.mesh @mesh = <["x"=2, "z"=2]>
  sdy.mesh @mesh_1 = <["x"=8]>
  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x", ?}]>}, tensor<4xf32>) {
    %0 = stablehlo.maximum %arg0, %arg0 : tensor<4xf32>
    sdy.sharding_group %arg0 group_id=0 : tensor<4xf32>
    sdy.sharding_group %0 group_id=0 : tensor<4xf32>
    %1 = stablehlo.minimum %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{"x", ?}]>]>} : tensor<4xf32>
    return %1, %0 : tensor<4xf32>, tensor<4xf32>
  }
}

