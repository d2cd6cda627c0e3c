module {
  sdy.mesh @mesh = <["y"=4, "x"=4]> {stablehlo.mesh = {axes = [{name = "y", size = 4 : i64}, {name = "x", size = 4 : i64}]}}
  sdy.mesh @mesh_1 = <["z"=2, "x"=8]> {stablehlo.mesh = {axes = [{name = "z", size = 2 : i64}, {name = "x", size = 8 : i64}]}}
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<8x2x4xf32>, %arg2: tensor<2xf32>, %arg3: tensor<8x4x2xf32>, %arg4: tensor<4x2xf32>, %arg5: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg6: tensor<8x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x":(1)2, "z"}, {}, {}]>}, %arg7: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {}]>}) -> (tensor<8x1x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
    %0 = stablehlo.maximum %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y":(1)2}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x2x4xf32>
    %3 = stablehlo.slice %2 [0:8, 1:2, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x", "y":(2)2}, {}]>]>} : (tensor<8x2x4xf32>) -> tensor<8x1x4xf32>
    return %3 : tensor<8x1x4xf32>
  }
}
