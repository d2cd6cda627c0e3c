module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {?}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {?}]>}) -> (tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>} : (tensor<64x32xf32>, tensor<16x32xf32>) -> tensor<64x16xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>} : tensor<64x16xf32>
    return %1 : tensor<64x16xf32>
  }
}

