// A sum over a sharded dimension: each device holds a partial sum, so the
// reduce is followed by an all-reduce over the axis that sharded it ("x");
// the kept dimension stays sharded on "y".
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<32xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %init) applies stablehlo.add across dimensions = [0] : (tensor<64x32xf32>, tensor<f32>) -> tensor<32xf32>
  %1 = stablehlo.exponential %0 : tensor<32xf32>
  return %1 : tensor<32xf32>
}
