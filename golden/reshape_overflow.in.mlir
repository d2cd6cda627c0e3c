// A reshape whose input dimension of 24 is sharded on "x" (6) then "y" (4):
// split into 4x6, "x" does not divide the major factor 4 (gcd 2), so the
// sharding of the input overflows. The full version redistributes the
// axes over both sides, axis first (partitioning.md 2.5), and reshards the
// result back to the sharding it was given.
sdy.mesh @mesh = <["x"=6, "y"=4]>

func.func @main(%arg0: tensor<24x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>})
    -> (tensor<4x6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}) {
  %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}, {}]>]>} : (tensor<24x8xf32>) -> tensor<4x6x8xf32>
  return %0 : tensor<4x6x8xf32>
}
