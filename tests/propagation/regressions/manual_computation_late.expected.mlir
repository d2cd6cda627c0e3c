module {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b", ?}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {"b", ?}]>] out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={"b"} (%arg2: tensor<8x2xf32>) {
      %3 = sdy.data_flow_edge %arg2 sharding=<@mesh, [{?}, {?}]> : tensor<8x2xf32>
      %4 = stablehlo.negate %3 : tensor<8x2xf32>
      sdy.return %4 : tensor<8x2xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{?}, {"b", ?}]> : tensor<8x8xf32>
    %2 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<8x8xf32>
    return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}

