sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<16x16xf32>, %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"c"}]>}) -> tensor<16x16xf32> {
  %x = stablehlo.add %arg0, %arg1 : tensor<16x16xf32>
  %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%a1: tensor<8x16xf32>) {
    %1 = stablehlo.negate %a1 : tensor<8x16xf32>
    %2 = stablehlo.add %1, %1 : tensor<8x16xf32>
    sdy.return %2 : tensor<8x16xf32>
  } : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %3 = stablehlo.negate %0 : tensor<16x16xf32>
  return %3 : tensor<16x16xf32>
}
