module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "c"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}, {name = "c", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<4x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}, {"y", "x", "z"}]>}, %arg1: tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", "x", "y", "z", "a"}]>}) -> (tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", "x", "y", "z", "a"}]>}) {
    %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c", "x", "y", "z", "a"}]>]>} : (tensor<4x256xf32>) -> tensor<1024xf32>
    %1 = stablehlo.add %0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c", "x", "y", "z", "a"}]>]>} : tensor<1024xf32>
    return %1 : tensor<1024xf32>
  }
}
