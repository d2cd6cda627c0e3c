// Function calls: shardings cross the call boundary both ways. The callee
// @scale is called twice; the pipeline gives each call its own copy while
// propagating and folds equal copies back afterwards, so the two calls end
// with different callees when their shardings differ (%a's "x" against the
// "y" that the result annotation sends back into the second call).
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = call @scale(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @scale(%b) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.sqrt %1 : tensor<8x8xf32>
  return %0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}

func.func private @scale(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
