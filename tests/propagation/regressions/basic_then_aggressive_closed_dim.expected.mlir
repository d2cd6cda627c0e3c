module {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
  func.func @main(%arg0: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y"}, {?}]>}, %arg1: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", "z", ?}, {?}]>}) -> (tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y", "z", ?}, {?}]>}) {
    %0 = stablehlo.multiply %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", "z", ?}, {?}]>]>} : tensor<4x8x8xf32>
    %1 = stablehlo.tanh %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", "z", ?}, {?}]>]>} : tensor<4x8x8xf32>
    return %1 : tensor<4x8x8xf32>
  }
}

