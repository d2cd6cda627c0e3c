module @jit_one_f_one_b attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x128xf32>, %arg1: tensor<128x64xf32>, %arg2: tensor<8x64xf32>, %arg3: tensor<8x64xf32>, %arg4: tensor<8x64xf32>, %arg5: tensor<8x64xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<64x128xf32> {jax.result_info = "result[1]"}, tensor<128x64xf32> {jax.result_info = "result[2]"}) {
    %0 = call @stage0_fwd(%arg0, %arg2) : (tensor<64x128xf32>, tensor<8x64xf32>) -> tensor<8x128xf32>
    %1 = call @stage0_fwd(%arg0, %arg3) : (tensor<64x128xf32>, tensor<8x64xf32>) -> tensor<8x128xf32>
    %2 = call @stage1_fwd(%arg1, %0, %arg4) : (tensor<128x64xf32>, tensor<8x128xf32>, tensor<8x64xf32>) -> tensor<f32>
    %3:2 = call @stage1_bwd(%arg1, %0, %arg4) : (tensor<128x64xf32>, tensor<8x128xf32>, tensor<8x64xf32>) -> (tensor<128x64xf32>, tensor<8x128xf32>)
    %4 = call @stage0_bwd(%arg0, %arg2, %3#1) : (tensor<64x128xf32>, tensor<8x64xf32>, tensor<8x128xf32>) -> tensor<64x128xf32>
    %5 = call @stage1_fwd(%arg1, %1, %arg5) : (tensor<128x64xf32>, tensor<8x128xf32>, tensor<8x64xf32>) -> tensor<f32>
    %6:2 = call @stage1_bwd(%arg1, %1, %arg5) : (tensor<128x64xf32>, tensor<8x128xf32>, tensor<8x64xf32>) -> (tensor<128x64xf32>, tensor<8x128xf32>)
    %7 = call @stage0_bwd(%arg0, %arg3, %6#1) : (tensor<64x128xf32>, tensor<8x64xf32>, tensor<8x128xf32>) -> tensor<64x128xf32>
    %8 = stablehlo.add %2, %5 : tensor<f32>
    %9 = stablehlo.add %4, %7 : tensor<64x128xf32>
    %10 = stablehlo.add %3#0, %6#0 : tensor<128x64xf32>
    return %8, %9, %10 : tensor<f32>, tensor<64x128xf32>, tensor<128x64xf32>
  }
  func.func private @stage0_fwd(%arg0: tensor<64x128xf32>, %arg1: tensor<8x64xf32>) -> tensor<8x128xf32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
    %1 = stablehlo.tanh %0 : tensor<8x128xf32>
    return %1 : tensor<8x128xf32>
  }
  func.func private @stage1_fwd(%arg0: tensor<128x64xf32>, %arg1: tensor<8x128xf32>, %arg2: tensor<8x64xf32>) -> tensor<f32> {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %1 = stablehlo.tanh %0 : tensor<8x64xf32>
    %2 = stablehlo.subtract %1, %arg2 : tensor<8x64xf32>
    %3 = stablehlo.multiply %2, %2 : tensor<8x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64xf32>, tensor<f32>) -> tensor<f32>
    return %4 : tensor<f32>
  }
  func.func private @stage1_bwd(%arg0: tensor<128x64xf32>, %arg1: tensor<8x128xf32>, %arg2: tensor<8x64xf32>) -> (tensor<128x64xf32>, tensor<8x128xf32>) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %1 = stablehlo.tanh %0 : tensor<8x64xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<8x64xf32>
    %4 = stablehlo.subtract %1, %arg2 : tensor<8x64xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %6 = stablehlo.multiply %5, %4 : tensor<8x64xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %8 = stablehlo.multiply %7, %6 : tensor<8x64xf32>
    %9 = stablehlo.multiply %8, %3 : tensor<8x64xf32>
    %10 = stablehlo.multiply %9, %1 : tensor<8x64xf32>
    %11 = stablehlo.add %9, %10 : tensor<8x64xf32>
    %12 = stablehlo.dot_general %11, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<8x128xf32>) -> tensor<64x128xf32>
    %13 = stablehlo.transpose %12, dims = [1, 0] : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %14 = stablehlo.dot_general %11, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<128x64xf32>) -> tensor<8x128xf32>
    return %13, %14 : tensor<128x64xf32>, tensor<8x128xf32>
  }
  func.func private @stage0_bwd(%arg0: tensor<64x128xf32>, %arg1: tensor<8x64xf32>, %arg2: tensor<8x128xf32>) -> tensor<64x128xf32> {
    %0:2 = call @stage0_fwd_0(%arg0, %arg1) : (tensor<64x128xf32>, tensor<8x64xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>)
    %1 = call @stage0_fwd_1(%arg1, %0#0, %0#1, %arg2) : (tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<64x128xf32>
    return %1 : tensor<64x128xf32>
  }
  func.func private @stage0_fwd_0(%arg0: tensor<64x128xf32>, %arg1: tensor<8x64xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
    %1 = stablehlo.tanh %0 : tensor<8x128xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %3 = stablehlo.subtract %2, %1 : tensor<8x128xf32>
    return %1, %3 : tensor<8x128xf32>, tensor<8x128xf32>
  }
  func.func private @stage0_fwd_1(%arg0: tensor<8x64xf32>, %arg1: tensor<8x128xf32>, %arg2: tensor<8x128xf32>, %arg3: tensor<8x128xf32>) -> tensor<64x128xf32> {
    %0 = stablehlo.multiply %arg3, %arg2 : tensor<8x128xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<8x128xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x128xf32>
    %3 = stablehlo.dot_general %2, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<8x64xf32>) -> tensor<128x64xf32>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<128x64xf32>) -> tensor<64x128xf32>
    return %4 : tensor<64x128xf32>
  }
}
