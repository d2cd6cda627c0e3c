// FLAGS: -sdy-add-data-flow-edges -sdy-basic-propagate
// The same for a manual computation's operand.
sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{?}, {"b", ?}]>] out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={"b"} (%a: tensor<8x2xf32>) {
    %n = stablehlo.negate %a : tensor<8x2xf32>
    sdy.return %n : tensor<8x2xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
