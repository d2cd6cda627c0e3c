module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}, {name = "b", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "b"}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z"}, {}]>}, %arg2: tensor<64x4xi1> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "x"}, {}]>}) -> (tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "a", "z", "x"}, {}]>}) {
    %0 = stablehlo.select %arg2, %arg1, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "a", "z", "x"}, {}]>]>} : tensor<64x4xi1>, tensor<64x4xf32>
    return %0 : tensor<64x4xf32>
  }
}
