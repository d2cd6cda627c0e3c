// Element-wise ops pass every dimension's axes through, forwards and backwards:
// %a's sharding reaches the whole chain, and %b (unannotated) takes it too.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = stablehlo.add %a, %b : tensor<16x8xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<16x8xf32>
  %2 = stablehlo.tanh %1 : tensor<16x8xf32>
  %3 = stablehlo.exponential %2 : tensor<16x8xf32>
  %4 = stablehlo.subtract %3, %b : tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}
