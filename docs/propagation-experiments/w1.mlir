sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:3 = stablehlo.while(%iterArg = %arg1, %iterArg_2 = %c, %it3 = %arg0) : tensor<8x8xf32>, tensor<i32>, tensor<8x8xf32>
    cond {
    %3 = stablehlo.compare  LT, %iterArg_2, %iterArg_2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %4 = stablehlo.add %iterArg, %it3 : tensor<8x8xf32>
    %5 = stablehlo.transpose %4, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %5, %iterArg_2, %it3 : tensor<8x8xf32>, tensor<i32>, tensor<8x8xf32>
  }
  return %1#0 : tensor<8x8xf32>
}
