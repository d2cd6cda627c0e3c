// FLAGS: -sdy-propagation-pipeline
// %0 (reshape of %arg0) holds "c" when the add sees %arg1's c,x,y,z,a:
// %arg1's proposal of "c" at position 0 is dropped for %0's (same unit,
// same position), yet %arg1's own prefix holds and "z","a" go on (core.dl:
// own_prefix reads the tensors' units, not the proposals op_unit keeps).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "c"=2]>

func.func @main(%arg0: tensor<4x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", ?}p1, {"y", "x", "z", ?}p1]>},
    %arg1: tensor<1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", "x", "y", "z", "a"}p2]>}) -> tensor<1024xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<4x256xf32>) -> tensor<1024xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<1024xf32>
  return %1 : tensor<1024xf32>
}
