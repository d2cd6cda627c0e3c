module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "y", "z"}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {}]>]>} : tensor<64x4xf32>
    return %0 : tensor<64x4xf32>
  }
}
