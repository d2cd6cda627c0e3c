// Unreduced values: the dot's result is declared unreduced on "y" (the
// axis of its contracting dimension), so no all-reduce follows it; the add
// keeps the partial sums; the function result wants them summed, so the
// all-reduce is delayed to the return. The second argument is replicated
// and its result wants it unreduced on "x": replicated_to_unreduced.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%lhs: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %rhs: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                %bias: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
        tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
  %0 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : tensor<8x8xf32>
  return %1, %bias : tensor<8x8xf32>, tensor<8x8xf32>
}
