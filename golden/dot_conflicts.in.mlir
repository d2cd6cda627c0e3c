// A dot whose operands and result shard one axis on different dimensions
// (closed shardings: propagation keeps them). The full version picks the
// working shardings greedily by tensor sizes: "x" goes to the result's
// column dimension (the largest tensor holding it), "y" to the contracting
// dimension; lhs and rhs are resharded, and the sharded contracting
// dimension needs an all-reduce over "y".
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%lhs: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %rhs: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
