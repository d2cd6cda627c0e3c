module {
  sdy.mesh @mesh = <["y"=2, "x"=2]> {stablehlo.mesh = {axes = [{name = "y", size = 2 : i64}, {name = "x", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}]>}) {
    %0 = stablehlo.concatenate %arg0, %arg0, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
    %1 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x"}]>]>} : (tensor<2x2xf32>) -> tensor<4xf32>
    return %0, %1 : tensor<4x2xf32>, tensor<4xf32>
  }
}
