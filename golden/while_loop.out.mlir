module {
  sdy.mesh @mesh = <["x"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = sdy.constant dense<10> : tensor<i32>
    %2 = sdy.constant dense<1> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<32x8xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x"}, {}]>]>}
    cond {
      %5 = stablehlo.compare LT, %iterArg, %1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %5 = stablehlo.add %iterArg, %2 : tensor<i32>
      %6 = stablehlo.tanh %iterArg_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<32x8xf32>
      stablehlo.return %5, %6 : tensor<i32>, tensor<32x8xf32>
    }
    %4 = stablehlo.negate %3#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<32x8xf32>
    return %4 : tensor<32x8xf32>
  }
}
