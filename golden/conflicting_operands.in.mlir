// The operands of an add disagree on dimension 0 ("x" against "y"): the
// compatible axes are their common prefix (none), so the result takes
// neither (three conflicts in the report). At the dot_general, "x" is wanted
// by two factors (%a's dimension 0 and %c's dimension 1); the aggressive
// strategy gives it to the factor whose source tensor is larger (%c), so
// the result is sharded on its dimension 1.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                %c: tensor<4x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x4xf32>, tensor<8x64xf32>) {
  %0 = stablehlo.add %a, %b : tensor<8x4xf32>
  %1 = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x64xf32>) -> tensor<8x64xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x64xf32>
}
