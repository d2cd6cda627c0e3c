// broadcast_in_dim maps the operand's dimension 0 to the result's dimension 1;
// the new dimension 0 takes "x" from the other operand of the add, and the
// add's "y" goes back to the broadcast's operand.
sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @main(%v: tensor<32xf32>,
                %m: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x32xf32> {
  %0 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.add %0, %m : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
