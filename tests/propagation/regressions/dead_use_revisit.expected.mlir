module {
  sdy.mesh @mesh = <["z"=2, "w"=4]> {stablehlo.mesh = {axes = [{name = "z", size = 2 : i64}, {name = "w", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<6x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, %arg1: tensor<12xf32>, %arg2: tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w":(1)2}, {}]>}, %arg3: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}, %arg4: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, %arg5: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}, %arg6: tensor<6x12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z", "w":(1)2}, {}]>}, %arg7: tensor<2x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg8: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg9: tensor<12xf32>, %arg10: tensor<12xf32>) -> (tensor<6x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) {
    %0 = stablehlo.sqrt %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z"}]>]>} : tensor<6x2xf32>
    %1 = stablehlo.concatenate %arg2, %arg2, %arg2, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", "w"}]>]>} : (tensor<4x12xf32>, tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<12x12xf32>
    %2 = stablehlo.slice %1 [6:12, 0:12] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", "w"}]>]>} : (tensor<12x12xf32>) -> tensor<6x12xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z", "w"}, {}]>]>} : (tensor<6x12xf32>) -> tensor<12x6xf32>
    %4 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [1] x [0] : (tensor<6x2xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
    %5:2 = call @f1(%arg3, %4) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}, {}]>, <@mesh, [{}, {}]>]>} : (tensor<2x8xf32>, tensor<6x8xf32>) -> (tensor<2x4x2xf32>, tensor<6x8xf32>)
    %6 = stablehlo.add %5#1, %5#1 : tensor<6x8xf32>
    %7 = stablehlo.minimum %3, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : tensor<12x6xf32>
    %8 = stablehlo.tanh %6 : tensor<6x8xf32>
    %9 = stablehlo.abs %8 : tensor<6x8xf32>
    %10 = stablehlo.transpose %9, dims = [1, 0] : (tensor<6x8xf32>) -> tensor<8x6xf32>
    %11 = sdy.constant dense<0> : tensor<i32>
    %12 = sdy.constant dense<1> : tensor<i32>
    %13 = sdy.constant dense<3> : tensor<i32>
    %14:3 = stablehlo.while(%iterArg = %11, %iterArg_0 = %10, %iterArg_1 = %arg2) : tensor<i32>, tensor<8x6xf32>, tensor<4x12xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {}]>, <@mesh, [{"z", "w":(1)2}, {}]>]>}
    cond {
      %22 = stablehlo.compare LT, %iterArg, %13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %22 : tensor<i1>
    } do {
      %22 = func.call @f9(%iterArg_1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z", "w":(1)2}, {}]>]>} : (tensor<4x12xf32>) -> tensor<4x12xf32>
      %23 = stablehlo.add %iterArg, %12 : tensor<i32>
      stablehlo.return %23, %iterArg_0, %22 : tensor<i32>, tensor<8x6xf32>, tensor<4x12xf32>
    }
    %15 = stablehlo.tanh %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : tensor<12x6xf32>
    %16 = sdy.reshard %15 <@mesh, [{"w":(1)2}, {}]> : tensor<12x6xf32>
    %17 = stablehlo.slice %16 [0:12, 3:6] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : (tensor<12x6xf32>) -> tensor<12x3xf32>
    %18 = stablehlo.maximum %17, %17 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : tensor<12x3xf32>
    %19 = stablehlo.minimum %18, %17 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : tensor<12x3xf32>
    %20 = stablehlo.maximum %17, %19 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : tensor<12x3xf32>
    %21:2 = stablehlo.while(%iterArg = %11, %iterArg_0 = %20) : tensor<i32>, tensor<12x3xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"w":(1)2}, {}]>]>}
    cond {
      %22 = stablehlo.compare LT, %iterArg, %13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %22 : tensor<i1>
    } do {
      %22 = func.call @f10(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>} : (tensor<12x3xf32>) -> tensor<12x3xf32>
      %23 = stablehlo.add %iterArg, %12 : tensor<i32>
      stablehlo.return %23, %22 : tensor<i32>, tensor<12x3xf32>
    }
    return %0 : tensor<6x2xf32>
  }
  func.func private @f1(%arg0: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}, %arg1: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<2x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}, {}]>}, tensor<6x8xf32>) {
    %0 = stablehlo.maximum %arg1, %arg1 : tensor<6x8xf32>
    %1 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}, {}]>]>} : (tensor<2x8xf32>) -> tensor<2x4x2xf32>
    return %1, %0 : tensor<2x4x2xf32>, tensor<6x8xf32>
  }
  func.func private @f9(%arg0: tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w":(1)2}, {}]>}) -> (tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w":(1)2}, {}]>}) {
    return %arg0 : tensor<4x12xf32>
  }
  func.func private @f10(%arg0: tensor<12x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) -> (tensor<12x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w":(1)2}, {}]>}) {
    return %arg0 : tensor<12x3xf32>
  }
}
