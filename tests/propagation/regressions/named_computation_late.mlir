// FLAGS: -sdy-basic-propagate
// A named computation's operand sharded after its body-argument edge was visited:
// the edge is not revisited (a use by the computation notifies the computation).
sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.named_computation<"f">(%arg0) (%a: tensor<8x8xf32>) {
    %e = sdy.data_flow_edge %a : tensor<8x8xf32>
    %n = stablehlo.negate %e : tensor<8x8xf32>
    sdy.return %n : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.data_flow_edge %0 : tensor<8x8xf32>
  %2 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
