module {
  sdy.mesh @mesh = <["w"=4]> {stablehlo.mesh = {axes = [{name = "w", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<2x6x8xf32>, %arg2: tensor<2x12xf32>, %arg3: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg4: tensor<4x4x2xf32>, %arg5: tensor<4x4x2xf32>, %arg6: tensor<4x4x2xf32>, %arg7: tensor<4x8x2xf32>, %arg8: tensor<2x8xf32>, %arg9: tensor<4x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}, {}]>}, %arg10: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = stablehlo.sqrt %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w":(2)2}]>]>} : tensor<4x6xf32>
    %1 = stablehlo.cosine %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w":(2)2}]>]>} : tensor<4x6xf32>
    %2 = stablehlo.dot_general %1, %arg3, contracting_dims = [1] x [0] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.multiply %arg3, %arg3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {}]>]>} : tensor<6x8xf32>
    %4 = sdy.constant dense<0> : tensor<i32>
    %5 = sdy.constant dense<1> : tensor<i32>
    %6 = sdy.constant dense<2> : tensor<i32>
    %7:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %2) : tensor<i32>, tensor<4x8xf32>
    cond {
      %12 = stablehlo.compare LT, %iterArg, %6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %12 : tensor<i1>
    } do {
      %12 = func.call @f1(%iterArg_0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %13 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %13, %12 : tensor<i32>, tensor<4x8xf32>
    }
    %8 = call @f2(%arg3) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : (tensor<6x8xf32>) -> tensor<6x8xf32>
    %9 = stablehlo.reshape %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}]>]>} : (tensor<6x8xf32>) -> tensor<48xf32>
    %10 = stablehlo.abs %9 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}]>]>} : tensor<48xf32>
    %11 = stablehlo.slice %10 [0:24] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}]>]>} : (tensor<48xf32>) -> tensor<24xf32>
    return %11 : tensor<24xf32>
  }
  func.func private @f1(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    return %arg0 : tensor<4x8xf32>
  }
  func.func private @f3(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) {
    return %arg0 : tensor<6x8xf32>
  }
  func.func private @f2(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) {
    %0 = sdy.reshard %arg0 <@mesh, [{"w"}, {}]> : tensor<6x8xf32>
    %1 = stablehlo.subtract %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {}]>]>} : tensor<6x8xf32>
    %2 = sdy.constant dense<0> : tensor<i32>
    %3 = sdy.constant dense<1> : tensor<i32>
    %4 = sdy.constant dense<4> : tensor<i32>
    %5:2 = stablehlo.while(%iterArg = %2, %iterArg_0 = %1) : tensor<i32>, tensor<6x8xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"w"}, {}]>]>}
    cond {
      %6 = stablehlo.compare LT, %iterArg, %4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %6 = func.call @f3(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : (tensor<6x8xf32>) -> tensor<6x8xf32>
      %7 = stablehlo.add %iterArg, %3 : tensor<i32>
      stablehlo.return %7, %6 : tensor<i32>, tensor<6x8xf32>
    }
    return %0 : tensor<6x8xf32>
  }
}
