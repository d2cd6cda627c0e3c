// Sub-axes that cannot coexist: on an axis of size 6, "a":(1)2 and "a":(3)2
// (the gap between them is not divisible), so no chain of sub-axes makes
// both. Each keeps its own sharding: the negate and the transpose carry
// "a":(3)2, and the add, which meets both, takes only its first operand's
// "a":(1)2 (its second dimension cannot also hold "a":(3)2).
sdy.mesh @m = <["a"=6, "b"=2]>
func.func @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{"a":(1)2}, {}]>},
                %arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"a":(3)2}]>},
                %arg2: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<6x4xf32>) {
  %0 = stablehlo.negate %arg1 : tensor<4x6xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<4x6xf32>
  %2 = stablehlo.multiply %arg2, %arg0 : tensor<4x6xf32>
  %3 = stablehlo.transpose %0, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  return %1, %2, %3 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<6x4xf32>
}
