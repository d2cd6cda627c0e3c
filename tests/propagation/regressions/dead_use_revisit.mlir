// FLAGS: -sdy-propagation-pipeline
// The dead concatenate %v125 reads %v120 and the constraint %v121: at k = 0
// the constraint waits (%v120 has two uses) until the sweep erases the
// concatenate, which revisits the constraint: "w":(1)2 reaches %v120 and %v34
// in phase 0, before %v8's "z","w" at k = 1. Shrunk from generated program
// seed 29 (tests/generators/shrink.py).
sdy.mesh @mesh = <["z"=2, "w"=4]>
func.func @main(%arg1: tensor<6x2xf32>, %arg2: tensor<12xf32>, %arg3: tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w":(1)2}, {}]>}, %arg16: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", ?}, {?}]>}, %arg21: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {"z"}]>}, %arg23: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", ?}, {?}]>}, %arg53: tensor<6x12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"z", "w"}, {}]>}, %arg56: tensor<2x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg85: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={"z"}>}, %arg107: tensor<12xf32>, %arg115: tensor<12xf32>) -> (tensor<6x2xf32>) {
  %v5 = stablehlo.sqrt %arg1 : tensor<6x2xf32>
  %v6 = stablehlo.concatenate %arg3, %arg3, %arg3, dim = 0 : (tensor<4x12xf32>, tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<12x12xf32>
  %v7 = stablehlo.slice %v6 [6:12, 0:12] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"z", "w"}]>]>} : (tensor<12x12xf32>) -> tensor<6x12xf32>
  %v8 = stablehlo.transpose %v7, dims = [1, 0] : (tensor<6x12xf32>) -> tensor<12x6xf32>
  %v17 = stablehlo.dot_general %arg1, %arg16, contracting_dims = [1] x [0] : (tensor<6x2xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  %call19:2 = func.call @f1(%arg16, %v17) : (tensor<2x8xf32>, tensor<6x8xf32>) -> (tensor<2x4x2xf32>, tensor<6x8xf32>)
  %v20 = stablehlo.add %call19#1, %call19#1 : tensor<6x8xf32>
  %v34 = stablehlo.minimum %v8, %v8 : tensor<12x6xf32>
  %v78 = stablehlo.tanh %v20 : tensor<6x8xf32>
  %v81 = stablehlo.abs %v78 : tensor<6x8xf32>
  %v93 = stablehlo.transpose %v81, dims = [1, 0] : (tensor<6x8xf32>) -> tensor<8x6xf32>
  %c94 = stablehlo.constant dense<0> : tensor<i32>
  %c95 = stablehlo.constant dense<1> : tensor<i32>
  %c96 = stablehlo.constant dense<3> : tensor<i32>
  %w106:3 = stablehlo.while(%i97 = %c94, %it98 = %v93, %it99 = %arg3) : tensor<i32>, tensor<8x6xf32>, tensor<4x12xf32>
  cond {
    %p105 = stablehlo.compare LT, %i97, %c96, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p105 : tensor<i1>
  } do {
    %call100 = func.call @f9(%it99) : (tensor<4x12xf32>) -> tensor<4x12xf32>
    %i104 = stablehlo.add %i97, %c95 : tensor<i32>
    stablehlo.return %i104, %it98, %call100 : tensor<i32>, tensor<8x6xf32>, tensor<4x12xf32>
  }
  %v120 = stablehlo.tanh %v34 : tensor<12x6xf32>
  %v121 = sdy.sharding_constraint %v120 <@mesh, [{"w":(1)2}, {?}]> : tensor<12x6xf32>
  %v122 = stablehlo.slice %v121 [0:12, 3:6] : (tensor<12x6xf32>) -> tensor<12x3xf32>
  %v123 = stablehlo.maximum %v122, %v122 : tensor<12x3xf32>
  %v124 = stablehlo.minimum %v123, %v122 : tensor<12x3xf32>
  %v125 = stablehlo.concatenate %v121, %v120, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {?}]>]>} : (tensor<12x6xf32>, tensor<12x6xf32>) -> tensor<12x12xf32>
  %v126 = stablehlo.maximum %v122, %v124 : tensor<12x3xf32>
  %c127 = stablehlo.constant dense<0> : tensor<i32>
  %c128 = stablehlo.constant dense<1> : tensor<i32>
  %c129 = stablehlo.constant dense<3> : tensor<i32>
  %w137:2 = stablehlo.while(%i130 = %c127, %it131 = %v126) : tensor<i32>, tensor<12x3xf32>
  cond {
    %p136 = stablehlo.compare LT, %i130, %c129, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p136 : tensor<i1>
  } do {
    %call132 = func.call @f10(%it131) : (tensor<12x3xf32>) -> tensor<12x3xf32>
    %i135 = stablehlo.add %i130, %c128 : tensor<i32>
    stablehlo.return %i135, %call132 : tensor<i32>, tensor<12x3xf32>
  }
  return %v5 : tensor<6x2xf32>
}
func.func private @f1(%arg1: tensor<2x8xf32>, %arg2: tensor<6x8xf32>) -> (tensor<2x4x2xf32>, tensor<6x8xf32>) {
  %v3 = stablehlo.maximum %arg2, %arg2 : tensor<6x8xf32>
  %v4 = stablehlo.reshape %arg1 : (tensor<2x8xf32>) -> tensor<2x4x2xf32>
  return %v4, %v3 : tensor<2x4x2xf32>, tensor<6x8xf32>
}
func.func private @f5(%arg1: tensor<1152xf32>) -> (tensor<1152xf32>) {
  %v2 = stablehlo.exponential %arg1 : tensor<1152xf32>
  return %v2 : tensor<1152xf32>
}
func.func private @f9(%arg1: tensor<4x12xf32>) -> (tensor<4x12xf32>) {
  return %arg1 : tensor<4x12xf32>
}
func.func private @f10(%arg1: tensor<12x3xf32>) -> (tensor<12x3xf32>) {
  return %arg1 : tensor<12x3xf32>
}
