// Members of a sharding group end with one sharding: %b and %c are in group
// 0 with %a's result, so "x" reaches them although no op relates them.
sdy.mesh @mesh = <["x"=4]>

func.func @main(%a: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
                %b: tensor<16xf32>, %c: tensor<16xf32>) -> tensor<16xf32> {
  %0 = stablehlo.negate %a : tensor<16xf32>
  sdy.sharding_group %0 group_id=0 : tensor<16xf32>
  %1 = stablehlo.abs %b : tensor<16xf32>
  sdy.sharding_group %1 group_id=0 : tensor<16xf32>
  %2 = stablehlo.add %1, %c : tensor<16xf32>
  return %2 : tensor<16xf32>
}
