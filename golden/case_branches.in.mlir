// A case's result is a data-flow edge from each branch's returned value:
// "x" comes from both branches, "y" from the second one (%b) reaches the
// result and, backwards, the first branch's abs; the abs's operand %a is
// closed on dimension 1 (a conflict in the report).
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%p: tensor<i32>, %a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = "stablehlo.case"(%p) ({
    %1 = stablehlo.abs %a : tensor<8x8xf32>
    stablehlo.return %1 : tensor<8x8xf32>
  }, {
    %2 = stablehlo.negate %b : tensor<8x8xf32>
    stablehlo.return %2 : tensor<8x8xf32>
  }) : (tensor<i32>) -> tensor<8x8xf32>
  %3 = stablehlo.exponential %0 : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
