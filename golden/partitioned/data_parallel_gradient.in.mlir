// A weight gradient: the batch dimension is sharded over "data" and
// contracted, and the replicated gradient needs an all-reduce over "data".
sdy.mesh @mesh = <["data"=4]>
func.func @main(%x: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %dy: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
