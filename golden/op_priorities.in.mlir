// Op priorities: element-wise ops propagate first. The add carries %a's "x"
// (dimension 1) back to the dot_general's result before the dot_general is
// visited, so its result keeps "x" and %w's "y" (the rhs non-contracting
// dimension) stays out: a conflict at the dot_general. Without op
// priorities (-sdy-aggressive-propagate) the dot_general, first in program
// order, would give its result "y" instead.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %w: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [1] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %0, %a : tensor<8x8xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
