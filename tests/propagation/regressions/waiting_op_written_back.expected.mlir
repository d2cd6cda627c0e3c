module {
  sdy.mesh @mesh = <["z"=4]> {stablehlo.mesh = {axes = [{name = "z", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : tensor<8x8xf32>
    %2 = stablehlo.subtract %1, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : tensor<8x8xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.add %1, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : tensor<8x8xf32>
    %5 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : tensor<8x8xf32>
    %6 = sdy.reshard %5 <@mesh, [{"z"}, {}]> : tensor<8x8xf32>
    return %4, %6 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}
