module {
  sdy.mesh @mesh = <["x"=6, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 6 : i64}, {name = "y", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<24x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<4x6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}) {
    %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}, {}]>]>} : (tensor<24x8xf32>) -> tensor<4x6x8xf32>
    return %0 : tensor<4x6x8xf32>
  }
}
