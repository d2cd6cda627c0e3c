sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = sdy.named_computation<"foo">(%arg0) (%a: tensor<8x8xf32>) {
    %1 = stablehlo.negate %a : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.named_computation<"bar">(%0) in_shardings=[<@mesh, [{}, {"b"}]>] (%a: tensor<8x8xf32>) {
    %1 = stablehlo.negate %a : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
