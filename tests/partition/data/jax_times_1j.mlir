module @jit_times_1j attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<16x8xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<16x8xf32>) -> tensor<16x8xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<16x8xcomplex<f32>>
    %2 = stablehlo.multiply %0, %1 : tensor<16x8xcomplex<f32>>
    return %2 : tensor<16x8xcomplex<f32>>
  }
}
