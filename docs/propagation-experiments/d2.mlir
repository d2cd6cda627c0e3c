// -sdy-aggressive-propagate: %0 read twice by the dot (not reproduced: operand 1's write overwrites operand 0's)
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x4xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.dot_general %0, %0, contracting_dims = [0] x [0] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.tanh %1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"a"}, {"b", ?}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
