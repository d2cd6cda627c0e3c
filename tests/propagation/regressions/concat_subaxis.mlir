// FLAGS: -sdy-op-priority-propagate
// A write waiting for its prefix completed on another unit of the same size:
// %2 got "z":(1)2 where Shardy writes "z". From ../shared/conformance/repros.
module {
  sdy.mesh @mesh = <["w"=2, "z"=4]>
  func.func @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", "z", ?}, {}]>}, %arg1: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {?}]>}) -> tensor<16xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"z", ?}, {"w"}]> : tensor<8x2xf32>
    %1 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x2xf32>, tensor<2x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<16x2xf32>
    %3 = stablehlo.reshape %1 : (tensor<8x4xf32>) -> tensor<4x2x4xf32>
    %4 = stablehlo.concatenate %0, %0, dim = 0 : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<16x2xf32>
    %5 = stablehlo.add %2, %4 : tensor<16x2xf32>
    %6 = sdy.sharding_constraint %3 <@mesh, [{"z"}, {"w", ?}, {}]> : tensor<4x2x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16x2xf32>, tensor<f32>) -> tensor<16xf32>
    return %7 : tensor<16xf32>
  }
}
