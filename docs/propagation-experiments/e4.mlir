sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c) : tensor<8x8xf32>, tensor<i32>
    cond {
    %3 = stablehlo.compare  LT, %iterArg_2, %iterArg_2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %4 = stablehlo.add %iterArg, %iterArg : tensor<8x8xf32>
    stablehlo.return %4, %iterArg_2 : tensor<8x8xf32>, tensor<i32>
  }
  %x = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
  %y = sdy.sharding_constraint %x <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
  return %arg1 : tensor<8x8xf32>
}
