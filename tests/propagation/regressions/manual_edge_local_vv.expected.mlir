module {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}, {name = "c", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", "c"}, {}]>}) -> (tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", "c"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", "b", "c"}, {}]>] out_shardings=[<@mesh, [{"a", "b", "c"}, {}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
      %1 = stablehlo.add %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", "c"}, {}]>]>} : tensor<16x32xf32>
      sdy.return %1 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
}
