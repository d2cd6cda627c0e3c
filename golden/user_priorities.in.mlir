// User priorities: p0 dimensions propagate first, then p1. %a (p1) and %b
// (p0) disagree on dimension 0: %b's "y" propagates in the p0 round and the
// adds take it, so in the p1 round %a's "x" finds dimension 0 taken (a
// conflict), while %c's "x" (p1, dimension 1) reaches the adds and %b's
// open dimension 1.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p1, {}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}p0, {?}]>},
                %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x"}p1]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %a, %b : tensor<8x8xf32>
  %1 = stablehlo.add %0, %c : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
