// Aggressive propagation through an elementwise op whose two factors want
// the same axis: the factor whose compatible axes are larger in total
// ("a","b" of size 8 on dimension 1) takes "a" first, so the result is
// sharded on dimension 1 only; dimension 0 gets nothing, although its
// factor comes first and its operand comes first.
sdy.mesh @m = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>},
                %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"a", "b"}]>})
    -> tensor<8x16xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
