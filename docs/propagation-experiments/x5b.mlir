sdy.mesh @mesh = <["a"=8, "b"=2]>
func.func @main(%arg0: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)2, "b", ?}, {?}]>},
                %arg1: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a":(1)4, ?}, {?}]>},
                %arg2: tensor<16x2xf32>) -> tensor<16x6xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, dim = 1 : (tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x2xf32>) -> tensor<16x6xf32>
  return %0 : tensor<16x6xf32>
}
