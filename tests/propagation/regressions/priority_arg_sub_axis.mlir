// FLAGS: -sdy-propagation-pipeline
// User priority p1 on %arg10, which a call's callee constrains to "w": in round p1
// the constraint's "w" reaches %arg10 at k = 0 through the call, while the dot's
// "w":(2)2 from %arg1, refused in round p0 (dimension held back), comes again
// only at k = 3 (a contracting factor), so the multiply %arg10 * %arg10 gets "w"
// (the rules used to retry the refused write at k = 0 and gave "w":(2)2). Shrunk
// from generated program seed 67 (50, 100 and 200 ops) with tests/generators/shrink.py.
sdy.mesh @mesh = <["w"=4]>
func.func @main(%arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}p0, {"w":(2)2, ?}]>}, %arg2: tensor<2x6x8xf32>, %arg3: tensor<2x12xf32>, %arg10: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}p1, {}]>}, %arg12: tensor<4x4x2xf32>, %arg22: tensor<4x4x2xf32>, %arg26: tensor<4x4x2xf32>, %arg49: tensor<4x8x2xf32>, %arg56: tensor<2x8xf32>, %arg60: tensor<4x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {?}p1, {}]>}, %arg62: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}) -> (tensor<24xf32>) {
  %v4 = stablehlo.sqrt %arg1 : tensor<4x6xf32>
  %v8 = stablehlo.cosine %v4 : tensor<4x6xf32>
  %v11 = stablehlo.dot_general %v8, %arg10, contracting_dims = [1] x [0] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %v17 = stablehlo.multiply %arg10, %arg10 : tensor<6x8xf32>
  %c31 = stablehlo.constant dense<0> : tensor<i32>
  %c32 = stablehlo.constant dense<1> : tensor<i32>
  %c33 = stablehlo.constant dense<2> : tensor<i32>
  %w41:2 = stablehlo.while(%i34 = %c31, %it35 = %v11) : tensor<i32>, tensor<4x8xf32>
  cond {
    %p40 = stablehlo.compare LT, %i34, %c33, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p40 : tensor<i1>
  } do {
    %call36 = func.call @f1(%it35) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %i39 = stablehlo.add %i34, %c32 : tensor<i32>
    stablehlo.return %i39, %call36 : tensor<i32>, tensor<4x8xf32>
  }
  %call64 = func.call @f2(%arg10) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %v73 = stablehlo.reshape %v17 : (tensor<6x8xf32>) -> tensor<48xf32>
  %v75 = stablehlo.abs %v73 : tensor<48xf32>
  %v76 = stablehlo.slice %v75 [0:24] : (tensor<48xf32>) -> tensor<24xf32>
  return %v76 : tensor<24xf32>
}
func.func private @f1(%arg1: tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  return %arg1 : tensor<4x8xf32>
}
func.func private @f2(%arg1: tensor<6x8xf32>) -> (tensor<6x8xf32>) {
  %v2 = stablehlo.subtract %arg1, %arg1 : tensor<6x8xf32>
  %c3 = stablehlo.constant dense<0> : tensor<i32>
  %c4 = stablehlo.constant dense<1> : tensor<i32>
  %c5 = stablehlo.constant dense<4> : tensor<i32>
  %w12:2 = stablehlo.while(%i6 = %c3, %it7 = %v2) : tensor<i32>, tensor<6x8xf32>
  cond {
    %p11 = stablehlo.compare LT, %i6, %c5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p11 : tensor<i1>
  } do {
    %call8 = func.call @f3(%it7) : (tensor<6x8xf32>) -> tensor<6x8xf32>
    %i10 = stablehlo.add %i6, %c4 : tensor<i32>
    stablehlo.return %i10, %call8 : tensor<i32>, tensor<6x8xf32>
  }
  %v13 = sdy.sharding_constraint %arg1 <@mesh, [{"w"}, {}]> : tensor<6x8xf32>
  return %v13 : tensor<6x8xf32>
}
func.func private @f3(%arg1: tensor<6x8xf32>) -> (tensor<6x8xf32>) {
  return %arg1 : tensor<6x8xf32>
}
