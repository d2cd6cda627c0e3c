module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x"}, {}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "a"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x"}, {}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
