module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
    %0 = stablehlo.custom_call @Cholesky(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.custom_call @_SPMDInternalOp_RotateRight(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.custom_call @annotate_device_placement(%1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %3 = stablehlo.custom_call @InvertDiagBlocksLowerTriangular(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %4 = stablehlo.custom_call @tpu_custom_call(%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %5 = stablehlo.custom_call @xla.debug.Log(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %6 = stablehlo.add %4, %5 : tensor<8x16xf32>
    %7 = stablehlo.custom_call @_SPMDInternalOp_MultiSlice(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0, %2, %3, %6, %7 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
  }
}
