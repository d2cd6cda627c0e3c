module {
  sdy.mesh @mesh = <["data"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = chlo.erf_inv %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<16x8xf32> -> tensor<16x8xf32>
    %1 = sdy.reshard %0 <@mesh, [{"data"}, {}]> : tensor<16x8xf32>
    return %1 : tensor<16x8xf32>
  }
}
