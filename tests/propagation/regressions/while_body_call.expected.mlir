module {
  sdy.mesh @mesh = <["a"=2, "b"=4]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<4x8x8xf32> {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.constant dense<1> : tensor<i32>
    %2 = sdy.constant dense<4> : tensor<i32>
    %3 = sdy.constant dense<0.000000e+00> : tensor<4x8x8xf32>
    %4 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"a"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<4x8x8xf32>
    %5:3 = stablehlo.while(%iterArg = %0, %iterArg_0 = %4, %iterArg_1 = %3) : tensor<i32>, tensor<4x8x8xf32>, tensor<4x8x8xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {"a"}, {}]>, <@mesh, [{}, {}, {}]>]>}
    cond {
      %6 = stablehlo.compare LT, %iterArg, %2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %6 = func.call @f(%iterArg_0) : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
      %7 = stablehlo.add %iterArg, %1 : tensor<i32>
      stablehlo.return %7, %iterArg_0, %6 : tensor<i32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>
    }
    return %5#2 : tensor<4x8x8xf32>
  }
  func.func private @f(%arg0: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4x8x8xf32>
    return %0 : tensor<4x8x8xf32>
  }
}
