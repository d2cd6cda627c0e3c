module {
  sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
  func.func @main(%arg0: tensor<8x24x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "z"}, {?}, {}]>}, %arg1: tensor<8x24x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"z", ?}], replicated={"y"}>}, %arg2: tensor<4x6x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"y":(1)2, "x", ?}, {?}]>}) -> (tensor<8x24x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "z", ?}, {?}, {?}]>}) {
    %cst = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "z", ?}, {?}, {?}]>]>} dense<1.000000e+00> : tensor<8x24x2xf32>
    %0 = stablehlo.add %arg0, %cst {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "z", ?}, {?}, {?}]>]>} : tensor<8x24x2xf32>
    %1 = stablehlo.multiply %arg1, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "z", ?}, {?}, {?}]>]>} : tensor<8x24x2xf32>
    return %1 : tensor<8x24x2xf32>
  }
}

