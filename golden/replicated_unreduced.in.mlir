// Axes a sharding lists as replicated or unreduced stay out of that tensor:
// %b is replicated on "y", so "y" does not reach it although the add's other
// operand has it; %c is unreduced on "x".
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"z"}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}], replicated={"y"}>},
                %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}], unreduced={"x"}>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %a, %b : tensor<8x8xf32>
  %1 = stablehlo.multiply %b, %c : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
