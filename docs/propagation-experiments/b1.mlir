sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, tensor<8x8xf32>) {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  %2 = sdy.propagation_barrier %1 allowed_direction=FORWARD : tensor<8x8xf32>
  %3 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %4 = sdy.propagation_barrier %3 allowed_direction=NONE : tensor<8x8xf32>
  return %2, %4 : tensor<8x8xf32>, tensor<8x8xf32>
}
