// A reshape splits dimension 0 (8 = 2 x 4): the axis "x" (size 4) covers it,
// so the result's dimensions get the sub-axes "x":(1)2 and "x":(2)2; merging
// them back (the second reshape) gives "x" again.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.reshape %a : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %1 = stablehlo.abs %0 : tensor<2x4x16xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
