module {
  func.func @main(%arg0: tensor<6x8xf32>) -> tensor<8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [0, 0], high = [2, 0], interior = [0, 0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1 = stablehlo.partition_id : tensor<ui32>
    %2 = stablehlo.convert %1 : (tensor<ui32>) -> tensor<i64>
    %c = stablehlo.constant dense<[0, 2, 4, 6]> : tensor<4xi64>
    %3 = stablehlo.dynamic_slice %c, %2, sizes = [1] : (tensor<4xi64>, tensor<i64>) -> tensor<1xi64>
    %4 = stablehlo.reshape %3 : (tensor<1xi64>) -> tensor<i64>
    %c_0 = stablehlo.constant dense<0> : tensor<i64>
    %5 = stablehlo.dynamic_slice %0, %4, %c_0, sizes = [2, 8] : (tensor<8x8xf32>, tensor<i64>, tensor<i64>) -> tensor<2x8xf32>
    %6 = stablehlo.abs %5 : tensor<2x8xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.iota dim = 0 : tensor<2x8xi32>
    %8 = stablehlo.partition_id : tensor<ui32>
    %9 = stablehlo.convert %8 : (tensor<ui32>) -> tensor<i64>
    %c_2 = stablehlo.constant dense<[0, 2, 4, 6]> : tensor<4xi64>
    %10 = stablehlo.dynamic_slice %c_2, %9, sizes = [1] : (tensor<4xi64>, tensor<i64>) -> tensor<1xi64>
    %11 = stablehlo.reshape %10 : (tensor<1xi64>) -> tensor<i64>
    %12 = stablehlo.convert %11 : (tensor<i64>) -> tensor<i32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<i32>) -> tensor<2x8xi32>
    %14 = stablehlo.add %7, %13 : tensor<2x8xi32>
    %c_3 = stablehlo.constant dense<6> : tensor<i32>
    %15 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<2x8xi32>
    %16 = stablehlo.compare LT, %14, %15 : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi1>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
    %18 = stablehlo.select %16, %6, %17 : tensor<2x8xi1>, tensor<2x8xf32>
    %19 = stablehlo.reduce(%18 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
    %20 = "stablehlo.all_reduce"(%19) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %21 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %21 : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    return %20 : tensor<8xf32>
  }
}
