sdy.mesh @mesh = <["a"=2, "b"=2]>
sdy.mesh @unused = <["c"=2]>
sdy.mesh @mesh2 = <["a"=2, "b"=2]>
sdy.mesh @one = <["a"=2, "x"=1]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@one, [{"x", "a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=2]>, [{"z"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh2, [{"a"}, {}]>]>} : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @dead(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
