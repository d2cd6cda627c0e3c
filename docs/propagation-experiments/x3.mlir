sdy.mesh @mesh = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<24xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<6x4xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}
