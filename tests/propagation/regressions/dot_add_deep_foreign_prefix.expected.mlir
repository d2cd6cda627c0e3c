module {
  sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z"}, {}]>}, %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", "z", "a"}, {}]>}) -> (tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", "z"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x", "z"}, {}]>]>} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %1 = stablehlo.add %0, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x", "z"}, {}]>]>} : tensor<64x16xf32>
    return %1 : tensor<64x16xf32>
  }
}
