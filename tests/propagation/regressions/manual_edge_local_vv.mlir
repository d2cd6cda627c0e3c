// FLAGS: -sdy-propagation-pipeline
// A manual computation's body-argument edge: the write at local position 1
// kept the proposal's vv (the last manual unit "a") where the body argument
// holds nothing before local position 0, so "c" never went after "b":
// in/out_shardings [{"a", "b"}], body add [{"b"}] where Shardy gives
// [{"a", "b", "c"}] and [{"b", "c"}]. From review r3 (man1).
module {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>

  func.func @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b", "c"}, {}]>}) -> tensor<32x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
      %2 = stablehlo.add %arg1, %arg1 : tensor<16x32xf32>
      sdy.return %2 : tensor<16x32xf32>
    } : (tensor<32x32xf32>) -> tensor<32x32xf32>
    func.return %0: tensor<32x32xf32>
  }
}
