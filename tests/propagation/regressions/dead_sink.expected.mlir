module {
  sdy.mesh @mesh = <["z"=4, "x"=2]>
  func.func @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"z"}]>}, %arg1: tensor<4x16xf32>) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"z", ?}]>}) {
    return %arg0 : tensor<2x4xf32>
  }
}

