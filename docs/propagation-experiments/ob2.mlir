sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x4xf32>) -> (tensor<8x8xf32>, tensor<8x4xf32>) {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<8x8xf32>, tensor<8x4xf32>
  %1:2 = "stablehlo.sort"(%arg0, %arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  return %1#0, %0#1 : tensor<8x8xf32>, tensor<8x4xf32>
}
