// Propagation barriers let shardings through in one direction only: the
// FORWARD barrier passes %a's "x" on; the BACKWARD one stops it going
// forward and lets the result's "y" back.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = sdy.propagation_barrier %a allowed_direction=FORWARD : tensor<8x8xf32>
  %1 = stablehlo.cosine %0 : tensor<8x8xf32>
  %2 = sdy.propagation_barrier %a allowed_direction=BACKWARD : tensor<8x8xf32>
  %3 = stablehlo.sine %2 : tensor<8x8xf32>
  return %1, %3 : tensor<8x8xf32>, tensor<8x8xf32>
}
