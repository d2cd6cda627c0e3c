module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.reshard %arg0 <@mesh, [{"data"}, {}]> : tensor<16x8xf32>
    %1 = sdy.constant dense<1> : tensor<i32>
    %2 = sdy.constant dense<32> : tensor<i32>
    %3 = stablehlo.shift_right_logical %1, %2 : tensor<i32>
    %4 = stablehlo.convert %3 : (tensor<i32>) -> tensor<ui32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<ui32>) -> tensor<1xui32>
    %6 = sdy.constant dense<-1> : tensor<i32>
    %7 = stablehlo.and %1, %6 : tensor<i32>
    %8 = stablehlo.convert %7 : (tensor<i32>) -> tensor<ui32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<ui32>) -> tensor<1xui32>
    %10 = stablehlo.concatenate %5, %9, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
    %11 = call @_normal(%10) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<2xui32>) -> tensor<16x8xf32>
    %12 = stablehlo.add %0, %11 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    return %12 : tensor<16x8xf32>
  }
  func.func private @closed_call(%arg0: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg1: tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg3: tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg4: tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg5: tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg6: tensor<4xui32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<4xui32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<i32>, tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<4xui32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<4xui32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = sdy.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %arg0, %0 : tensor<i32>
    %2 = stablehlo.slice %arg6 [0:1] : (tensor<4xui32>) -> tensor<1xui32>
    %3 = stablehlo.reshape %2 : (tensor<1xui32>) -> tensor<ui32>
    %4 = stablehlo.add %arg1, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %6 = stablehlo.shift_left %arg2, %5 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %7 = sdy.constant dense<32> : tensor<ui32>
    %8 = stablehlo.subtract %7, %3 : tensor<ui32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %10 = stablehlo.shift_right_logical %arg2, %9 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %11 = stablehlo.or %6, %10 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %12 = stablehlo.xor %4, %11 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %13 = stablehlo.slice %arg6 [1:2] : (tensor<4xui32>) -> tensor<1xui32>
    %14 = stablehlo.reshape %13 : (tensor<1xui32>) -> tensor<ui32>
    %15 = stablehlo.add %4, %12 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %16 = stablehlo.broadcast_in_dim %14, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %17 = stablehlo.shift_left %12, %16 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %18 = stablehlo.subtract %7, %14 : tensor<ui32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %20 = stablehlo.shift_right_logical %12, %19 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %21 = stablehlo.or %17, %20 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %22 = stablehlo.xor %15, %21 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %23 = stablehlo.slice %arg6 [2:3] : (tensor<4xui32>) -> tensor<1xui32>
    %24 = stablehlo.reshape %23 : (tensor<1xui32>) -> tensor<ui32>
    %25 = stablehlo.add %15, %22 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %26 = stablehlo.broadcast_in_dim %24, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %27 = stablehlo.shift_left %22, %26 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %28 = stablehlo.subtract %7, %24 : tensor<ui32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %30 = stablehlo.shift_right_logical %22, %29 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %31 = stablehlo.or %27, %30 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %32 = stablehlo.xor %25, %31 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %33 = stablehlo.slice %arg6 [3:4] : (tensor<4xui32>) -> tensor<1xui32>
    %34 = stablehlo.reshape %33 : (tensor<1xui32>) -> tensor<ui32>
    %35 = stablehlo.add %25, %32 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %36 = stablehlo.broadcast_in_dim %34, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %37 = stablehlo.shift_left %32, %36 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %38 = stablehlo.subtract %7, %34 : tensor<ui32>
    %39 = stablehlo.broadcast_in_dim %38, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %40 = stablehlo.shift_right_logical %32, %39 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %41 = stablehlo.or %37, %40 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %42 = stablehlo.xor %35, %41 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %43 = stablehlo.broadcast_in_dim %arg3, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %44 = stablehlo.add %35, %43 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %45 = stablehlo.broadcast_in_dim %arg4, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %46 = stablehlo.add %42, %45 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %47 = stablehlo.add %arg0, %0 : tensor<i32>
    %48 = stablehlo.convert %47 : (tensor<i32>) -> tensor<ui32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %50 = stablehlo.add %46, %49 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    return %1, %44, %50, %arg4, %arg5, %arg3, %arg7, %arg6 : tensor<i32>, tensor<16x8xui32>, tensor<16x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>
  }
  func.func private @threefry2x32(%arg0: tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg1: tensor<ui32> {sdy.sharding = #sdy.sharding<@mesh, []>}, %arg2: tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg3: tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<16x8xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.constant dense<[13, 15, 26, 6]> : tensor<4xui32>
    %1 = sdy.constant dense<[17, 29, 16, 24]> : tensor<4xui32>
    %2 = stablehlo.xor %arg0, %arg1 : tensor<ui32>
    %3 = sdy.constant dense<466688986> : tensor<ui32>
    %4 = stablehlo.xor %2, %3 : tensor<ui32>
    %5 = stablehlo.broadcast_in_dim %arg0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %6 = stablehlo.add %arg2, %5 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %7 = stablehlo.broadcast_in_dim %arg1, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %8 = stablehlo.add %arg3, %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %9 = sdy.constant dense<0> : tensor<i32>
    %10:9 = stablehlo.while(%iterArg = %9, %iterArg_0 = %9, %iterArg_1 = %6, %iterArg_2 = %8, %iterArg_3 = %arg1, %iterArg_4 = %4, %iterArg_5 = %arg0, %iterArg_6 = %0, %iterArg_7 = %1) : tensor<i32>, tensor<i32>, tensor<16x8xui32>, tensor<16x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, []>, <@mesh, [{"data"}, {}]>, <@mesh, [{"data"}, {}]>, <@mesh, []>, <@mesh, []>, <@mesh, []>, <@mesh, [{}]>, <@mesh, [{}]>]>}
    cond {
      %11 = sdy.constant dense<5> : tensor<i32>
      %12 = stablehlo.compare LT, %iterArg, %11, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %12 : tensor<i1>
    } do {
      %11:8 = func.call @closed_call(%iterArg_0, %iterArg_1, %iterArg_2, %iterArg_3, %iterArg_4, %iterArg_5, %iterArg_6, %iterArg_7) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"data"}, {}]>, <@mesh, [{"data"}, {}]>, <@mesh, []>, <@mesh, []>, <@mesh, []>, <@mesh, [{}]>, <@mesh, [{}]>]>} : (tensor<i32>, tensor<16x8xui32>, tensor<16x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<16x8xui32>, tensor<16x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %12 = sdy.constant dense<1> : tensor<i32>
      %13 = stablehlo.add %iterArg, %12 : tensor<i32>
      stablehlo.return %13, %11#0, %11#1, %11#2, %11#3, %11#4, %11#5, %11#6, %11#7 : tensor<i32>, tensor<i32>, tensor<16x8xui32>, tensor<16x8xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>
    }
    return %10#2, %10#3 : tensor<16x8xui32>, tensor<16x8xui32>
  }
  func.func private @_uniform(%arg0: tensor<2xui32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %2 = stablehlo.slice %arg0 [0:1] : (tensor<2xui32>) -> tensor<1xui32>
    %3 = stablehlo.reshape %2 : (tensor<1xui32>) -> tensor<ui32>
    %4 = stablehlo.slice %arg0 [1:2] : (tensor<2xui32>) -> tensor<1xui32>
    %5 = stablehlo.reshape %4 : (tensor<1xui32>) -> tensor<ui32>
    %6 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %7 = stablehlo.iota dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %8 = stablehlo.iota dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %9 = stablehlo.iota dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %10 = sdy.constant dense<8> : tensor<ui64>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui64>) -> tensor<16x8xui64>
    %12 = stablehlo.multiply %11, %6 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %13 = stablehlo.multiply %11, %7 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %14 = sdy.constant dense<1> : tensor<ui64>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui64>) -> tensor<16x8xui64>
    %16 = stablehlo.multiply %15, %8 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %17 = stablehlo.multiply %15, %9 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %18 = stablehlo.add %12, %16 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %19 = stablehlo.add %13, %17 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %20 = sdy.constant dense<32> : tensor<ui64>
    %21 = stablehlo.broadcast_in_dim %20, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui64>) -> tensor<16x8xui64>
    %22 = stablehlo.shift_right_logical %18, %21 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui64>
    %23 = stablehlo.convert %19 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x8xui64>) -> tensor<16x8xui32>
    %24 = stablehlo.convert %22 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x8xui64>) -> tensor<16x8xui32>
    %25:2 = call @threefry2x32(%3, %5, %24, %23) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>, <@mesh, [{"data"}, {}]>]>} : (tensor<ui32>, tensor<ui32>, tensor<16x8xui32>, tensor<16x8xui32>) -> (tensor<16x8xui32>, tensor<16x8xui32>)
    %26 = stablehlo.xor %25#0, %25#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %27 = sdy.constant dense<9> : tensor<ui32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %29 = stablehlo.shift_right_logical %26, %28 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %30 = sdy.constant dense<1065353216> : tensor<ui32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<ui32>) -> tensor<16x8xui32>
    %32 = stablehlo.or %29, %31 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xui32>
    %33 = stablehlo.bitcast_convert %32 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x8xui32>) -> tensor<16x8xf32>
    %34 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<f32>) -> tensor<16x8xf32>
    %36 = stablehlo.subtract %33, %35 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    %37 = stablehlo.subtract %1, %0 : tensor<1x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<1x1xf32>) -> tensor<16x8xf32>
    %39 = stablehlo.multiply %36, %38 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    %40 = stablehlo.broadcast_in_dim %0, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<1x1xf32>) -> tensor<16x8xf32>
    %41 = stablehlo.add %39, %40 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    %42 = stablehlo.broadcast_in_dim %0, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<1x1xf32>) -> tensor<16x8xf32>
    %43 = stablehlo.maximum %42, %41 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    return %43 : tensor<16x8xf32>
  }
  func.func private @_normal_real(%arg0: tensor<2xui32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = sdy.constant dense<-0.99999994> : tensor<f32>
    %1 = sdy.constant dense<1.000000e+00> : tensor<f32>
    %2 = call @_uniform(%arg0, %0, %1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<16x8xf32>
    %3 = stablehlo.sine %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    %4 = sdy.constant dense<1.41421354> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<f32>) -> tensor<16x8xf32>
    %6 = stablehlo.multiply %5, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32>
    return %6 : tensor<16x8xf32>
  }
  func.func private @_normal(%arg0: tensor<2xui32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = call @_normal_real(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<2xui32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
