// FLAGS: -sdy-aggressive-propagate
// One multiply wants "z" in two dimensions of its result: the factor order keeps it
// in the first (sdylog wrote both: invalid output). Shrunk from a generated program.
sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
func.func @main(%arg20: tensor<8x24x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "z"}, {?}, {}]>}, %arg21: tensor<8x24x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"z", ?}], replicated={"y"}>}, %arg24: tensor<4x6x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"y":(1)2, "x", ?}, {?}]>}) -> tensor<8x24x2xf32> {
  %cst = stablehlo.constant dense<1.000000e+00> : tensor<8x24x2xf32>
  %0 = stablehlo.add %arg20, %cst : tensor<8x24x2xf32>
  %1 = stablehlo.multiply %arg21, %0 : tensor<8x24x2xf32>
  return %1 : tensor<8x24x2xf32>
}
