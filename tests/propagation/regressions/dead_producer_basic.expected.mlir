module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%arg0: tensor<8x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}, {?}]>}) -> (tensor<8x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}, {?}]>}) {
    return %arg0 : tensor<8x12x4xf32>
  }
}

