sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"a"}>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %2 = stablehlo.negate %arg2 : tensor<8x8xf32>
  return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
