module {
  func.func @main(%arg0: tensor<2x8xf32>) -> tensor<8x2xf32> {
    %0 = stablehlo.negate %arg0 : tensor<2x8xf32>
    %1 = "stablehlo.all_to_all"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 1 : i64}> : (tensor<2x8xf32>) -> tensor<8x2xf32>
    %2 = stablehlo.exponential %1 : tensor<8x2xf32>
    return %2 : tensor<8x2xf32>
  }
}
