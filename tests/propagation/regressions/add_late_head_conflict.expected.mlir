module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z"}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z"}, {}]>}, %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "z"}, {}]>]>} : tensor<64x4xf32>
    %1 = stablehlo.add %0, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<64x4xf32>
    return %1 : tensor<64x4xf32>
  }
}
