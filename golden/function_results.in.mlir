// A function result whose declared sharding differs from the returned
// value's: a reshard right before the return (rows to columns). A
// callee's argument sharding makes its caller reshard the operand right
// after its definition; the second result, declared without a sharding,
// takes the call's from propagation and needs nothing.
sdy.mesh @mesh = <["x"=4]>

func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, tensor<16x16xf32>) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<16x16xf32>
  %1 = call @f(%0) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0, %1 : tensor<16x16xf32>, tensor<16x16xf32>
}

func.func private @f(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
