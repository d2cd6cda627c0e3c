module {
  sdy.mesh @m = <["a"=2, "b"=4]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"a", "b"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"a", "b"}]>}) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"a", "b"}]>]>} : tensor<8x16xf32>
    %1 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"a", "b"}]>]>} : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}
