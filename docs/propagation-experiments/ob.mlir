sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>, %pred: tensor<i32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
  %1 = "stablehlo.case"(%pred) ({
    %n = stablehlo.negate %arg1 : tensor<8x8xf32>
    stablehlo.return %n : tensor<8x8xf32>
  }, {
    %m = stablehlo.abs %0#0 : tensor<8x8xf32>
    stablehlo.return %m : tensor<8x8xf32>
  }) : (tensor<i32>) -> tensor<8x8xf32>
  return %0#0, %0#1, %1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
