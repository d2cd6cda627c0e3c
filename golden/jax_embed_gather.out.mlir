module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<1000x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<128x1000xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x64x1000xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) {
    %0 = call @_take(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {"model"}]>]>} : (tensor<1000x128xf32>, tensor<16x64xi32>) -> tensor<16x64x128xf32>
    %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x128xf32>, tensor<128x1000xf32>) -> tensor<16x64x1000xf32>
    %2 = call @log_softmax(%1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x1000xf32>) -> tensor<16x64x1000xf32>
    return %2 : tensor<16x64x1000xf32>
  }
  func.func private @_where(%arg0: tensor<16x64xi1> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg2: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.select %arg0, %arg1, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x64xi1>, tensor<16x64xi32>
    return %0 : tensor<16x64xi32>
  }
  func.func private @_take(%arg0: tensor<1000x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {"model"}]>}) {
    %0 = sdy.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<i32>) -> tensor<16x64xi32>
    %2 = stablehlo.compare LT, %arg1, %1, SIGNED {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x64xi32>, tensor<16x64xi32>) -> tensor<16x64xi1>
    %3 = sdy.constant dense<1000> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<i32>) -> tensor<16x64xi32>
    %5 = stablehlo.add %arg1, %4 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x64xi32>
    %6 = call @_where(%2, %5, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x64xi1>, tensor<16x64xi32>, tensor<16x64xi32>) -> tensor<16x64xi32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64xi32>) -> tensor<16x64x1xi32>
    %8 = sdy.constant dense<999> : tensor<1xi32>
    %9 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<i32>) -> tensor<16x64x1xi32>
    %10 = stablehlo.compare GE, %7, %9, SIGNED {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x1xi32>, tensor<16x64x1xi32>) -> tensor<16x64x1xi1>
    %11 = stablehlo.broadcast_in_dim %8, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<1x1x1xi32>) -> tensor<16x64x1xi32>
    %13 = stablehlo.compare LE, %7, %12, SIGNED {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x1xi32>, tensor<16x64x1xi32>) -> tensor<16x64x1xi1>
    %14 = stablehlo.and %10, %13 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : tensor<16x64x1xi1>
    %15 = sdy.constant dense<true> : tensor<i1>
    %16 = stablehlo.reduce(%14 init: %15) applies stablehlo.and across dimensions = [2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x64x1xi1>, tensor<i1>) -> tensor<16x64xi1>
    %17 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {"model"}]>]>} : (tensor<1000x128xf32>, tensor<16x64x1xi32>) -> tensor<16x64x128xf32>
    %18 = stablehlo.broadcast_in_dim %16, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {"model"}]>]>} : (tensor<16x64xi1>) -> tensor<16x64x128xi1>
    %19 = sdy.constant dense<0x7FC00000> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {"model"}]>]>} : (tensor<f32>) -> tensor<16x64x128xf32>
    %21 = stablehlo.select %18, %17, %20 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {"model"}]>]>} : tensor<16x64x128xi1>, tensor<16x64x128xf32>
    return %21 : tensor<16x64x128xf32>
  }
  func.func private @log_softmax(%arg0: tensor<16x64x1000xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) -> (tensor<16x64x1000xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) {
    %0 = sdy.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.maximum across dimensions = [2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x64x1000xf32>, tensor<f32>) -> tensor<16x64xf32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<f32>) -> tensor<16x64xf32>
    %3 = stablehlo.maximum %2, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x64xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x1xf32>) -> tensor<16x64x1000xf32>
    %6 = stablehlo.subtract %arg0, %5 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : tensor<16x64x1000xf32>
    %7 = stablehlo.exponential %6 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : tensor<16x64x1000xf32>
    %8 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%7 init: %8) applies stablehlo.add across dimensions = [2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<16x64x1000xf32>, tensor<f32>) -> tensor<16x64xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64xf32>) -> tensor<16x64x1xf32>
    %11 = stablehlo.log %10 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : tensor<16x64x1xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : (tensor<16x64x1xf32>) -> tensor<16x64x1000xf32>
    %13 = stablehlo.subtract %6, %12 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}, {}]>]>} : tensor<16x64x1000xf32>
    return %13 : tensor<16x64x1000xf32>
  }
}
