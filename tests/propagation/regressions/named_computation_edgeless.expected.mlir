module {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>}) {
    %0 = sdy.named_computation<"nc">(%arg0) in_shardings=[<@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] (%arg1: tensor<16x8xf32>) {
      %2 = stablehlo.exponential %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"x", ?}]>]>} : tensor<16x8xf32>
      sdy.return %2 : tensor<16x8xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", ?}]>]>} : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}

