sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2, "d"=2]>
func.func @main(%arg0: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>},
                %arg1: tensor<16x2xf32>,
                %arg2: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", "c", ?}, {?}]>},
                %arg3: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", "d", ?}, {?}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.concatenate %arg0, %arg1, %arg2, %arg3, dim = 1 : (tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x2xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
