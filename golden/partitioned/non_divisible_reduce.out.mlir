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
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<8xf32>
    %8 = "stablehlo.all_reduce"(%7) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %9 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    return %8 : tensor<8xf32>
  }
}
