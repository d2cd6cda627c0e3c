module {
  sdy.mesh @mesh = <["x"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}]}}
  sdy.mesh @mesh_1 = <["w"=4, "z"=4]> {stablehlo.mesh = {axes = [{name = "w", size = 4 : i64}, {name = "z", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {"w"}]>}, tensor<8x4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{}, {"w"}]>]>} : tensor<8x4xf32>
    %1 = stablehlo.negate %arg1 : tensor<8x4xf32>
    return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
  }
}
