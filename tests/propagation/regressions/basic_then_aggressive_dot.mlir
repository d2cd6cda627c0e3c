// FLAGS: -sdy-aggressive-propagate=propagation-strategy=basic-then-aggressive
// Basic then aggressive: the basic strategy leaves "y" where the dot's two
// non-contracting factors both want it (a conflict); the aggressive run after
// it gives it to %arg1 (a unit offered in a basic phase is offered again in the
// aggressive one). Was: basic-only output.
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {?}]>}, %arg1: tensor<16x32xf32>) -> tensor<64x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>} : (tensor<64x32xf32>, tensor<16x32xf32>) -> tensor<64x16xf32>
  %1 = stablehlo.negate %0 : tensor<64x16xf32>
  return %1 : tensor<64x16xf32>
}
