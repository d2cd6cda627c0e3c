module {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"z"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"z"}], unreduced={"x"}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"z"}]>}) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"z"}]>]>} : tensor<8x8xf32>
    %1 = sdy.all_reduce {"x"} %arg2 out_sharding=<@mesh, [{"y"}, {"z"}]> : tensor<8x8xf32>
    %2 = stablehlo.multiply %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"z"}]>]>} : tensor<8x8xf32>
    %3 = stablehlo.add %0, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"z"}]>]>} : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
