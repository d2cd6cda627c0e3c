// A reduction over dimension 1: the kept dimension keeps "x"; the reduced
// one's "y" does not reach the result (an all-reduce for the partitioner).
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<16x8xf32>, tensor<f32>) -> tensor<16xf32>
  %1 = stablehlo.sqrt %0 : tensor<16xf32>
  return %1 : tensor<16xf32>
}
