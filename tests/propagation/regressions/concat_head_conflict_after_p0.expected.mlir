module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}, {name = "b", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x", "y"}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "x", "y", "b"}, {}]>}, %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x"}, {}]>}) -> (tensor<64x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "x"}, {}]>}) {
    %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "x"}, {}]>]>} : (tensor<64x4xf32>, tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x12xf32>
    return %0 : tensor<64x12xf32>
  }
}
