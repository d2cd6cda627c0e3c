// pipeline: the call's block-argument edge is not revisited when the loop's argument gets "a" at k = 4
sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<4x8x8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c4 = stablehlo.constant dense<4> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<4x8x8xf32>
  %b = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<8x8xf32>) -> tensor<4x8x8xf32>
  %2:3 = stablehlo.while(%i = %c0, %r = %b, %out = %z) : tensor<i32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>
  cond {
    %p = stablehlo.compare LT, %i, %c4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %v = func.call @f(%r) : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
    %i1 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i1, %r, %v : tensor<i32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>
  }
  return %2#2 : tensor<4x8x8xf32>
}
func.func private @f(%arg0: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}
