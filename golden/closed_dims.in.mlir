// Closed dimensions ({...} without "?") take nothing new: %b's closed
// dimension 1 keeps "y" out, its open dimension 0 takes "x". The function
// result is closed and replicated: the returned value keeps its sharding
// and the partitioner reshards at the return (a conflict).
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%a: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}]>})
    -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.multiply %a, %b : tensor<16x8xf32>
  %1 = stablehlo.add %b, %b : tensor<16x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
