// A manual computation on "x": its body sees local shapes and shardings
// without "x"; the free axis "y" propagates through the body and out, and
// the tanh after it takes the global out sharding.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {?}]>] out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<4x16xf32>
    %2 = stablehlo.multiply %1, %arg1 : tensor<4x16xf32>
    sdy.return %2 : tensor<4x16xf32>
  } : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = stablehlo.tanh %0 : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
