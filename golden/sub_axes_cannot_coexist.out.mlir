module {
  sdy.mesh @m = <["a"=6, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 6 : i64}, {name = "b", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{"a":(1)2}, {}]>}, %arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"a":(3)2}]>}, %arg2: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}) -> (tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}, tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}, tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}]>}) {
    %0 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"a":(3)2}]>]>} : tensor<4x6xf32>
    %1 = stablehlo.add %arg0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a":(1)2}, {}]>]>} : tensor<4x6xf32>
    %2 = stablehlo.multiply %arg2, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a":(1)2}, {}]>]>} : tensor<4x6xf32>
    %3 = stablehlo.transpose %0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a":(3)2}, {}]>]>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
    return %1, %2, %3 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<6x4xf32>
  }
}
