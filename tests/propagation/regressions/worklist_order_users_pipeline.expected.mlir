module {
  sdy.mesh @mesh = <["x"=2, "w"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "w", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", "x"}, {}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x16xf32>
    %2 = stablehlo.subtract %1, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x16xf32>
    %3 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %4 = stablehlo.multiply %1, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w", "x"}, {}]>]>} : tensor<16x16xf32>
    return %3, %4 : tensor<16x16xf32>, tensor<16x16xf32>
  }
}
