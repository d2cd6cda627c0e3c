// -sdy-basic-propagate. Erasing the dead add pushes the producers of its
// operands again: the edge %e is revisited and takes its operand's "a" (in
// e3-like input without the dead add it is not revisited).
sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>) {
  %0 = sdy.named_computation<"f">(%arg0, %arg0) (%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) {
    %e = sdy.data_flow_edge %a : tensor<8x8xf32>
    %e2 = sdy.data_flow_edge %b sharding=<@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %m = stablehlo.add %e, %e2 : tensor<8x8xf32>
    sdy.return %e : tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.data_flow_edge %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
