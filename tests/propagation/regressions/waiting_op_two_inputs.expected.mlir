module {
  sdy.mesh @mesh = <["z"=2]> {stablehlo.mesh = {axes = [{name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}, {}]>}) -> (tensor<8x3072xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, tensor<16x12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"z"}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [2, 1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"z"}]>]>} : (tensor<16x12x16xf32>) -> tensor<16x12x16xf32>
    %1 = stablehlo.maximum %0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"z"}]>]>} : tensor<16x12x16xf32>
    %2 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}]>]>} : (tensor<16x12x16xf32>) -> tensor<3072xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : (tensor<3072xf32>) -> tensor<8x3072xf32>
    return %3, %1 : tensor<8x3072xf32>, tensor<16x12x16xf32>
  }
}
