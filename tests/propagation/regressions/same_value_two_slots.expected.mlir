module {
  sdy.mesh @mesh = <["x"=8, "w"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}, {name = "w", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) -> (tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}]>}, tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {"x"}]>]>} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {"x"}]>]>} : tensor<8x2xf32>
    return %0, %1 : tensor<2x2xf32>, tensor<8x2xf32>
  }
}
