// A transpose permutes the dimensions' shardings; the result's annotation
// ("y" on its dimension 0) flows back to the operand's dimension 2.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>})
    -> (tensor<16x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}) {
  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<4x8x16xf32>) -> tensor<16x4x8xf32>
  %1 = stablehlo.sine %0 : tensor<16x4x8xf32>
  return %1 : tensor<16x4x8xf32>
}
