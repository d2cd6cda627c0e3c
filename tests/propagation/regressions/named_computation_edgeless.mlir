// FLAGS: -sdy-basic-propagate
// A named computation without data-flow edges (not imported): its body argument's and result's shardings are its
// in_shardings and out_shardings, which propagate to their users (sdylog before c614210 read no sharding for the result).
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.named_computation<"nc">(%arg0) in_shardings=[<@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] (%d: tensor<16x8xf32>) {
    %1 = stablehlo.exponential %d : tensor<16x8xf32>
    sdy.return %1 : tensor<16x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = stablehlo.negate %0 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
