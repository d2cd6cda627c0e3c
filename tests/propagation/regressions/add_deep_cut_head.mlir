// FLAGS: -sdy-propagation-pipeline
// fz1_31 (fuzzed): %arg1 y,b,a,z,x (p1) meets x,b (from %arg2, round p0)
// at the adds: the lists differ at position 0, so no "a" after "b" (a
// proposal at position 2 chains onto the proposer's own units only where a
// mesh lists four units or more: core.dl, deep_position from 2).
sdy.mesh @mesh = <["a"=2, "x"=2, "y"=2, "z"=2, "b"=2]>

func.func @main(%arg0: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}]>},
    %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "b", "a", "z", "x", ?}p1, {?}]>},
    %arg2: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "b"}, {?}]>}) -> tensor<64x4xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x4xf32>
  %1 = stablehlo.add %arg1, %arg2 : tensor<64x4xf32>
  %2 = stablehlo.add %0, %1 : tensor<64x4xf32>
  return %2 : tensor<64x4xf32>
}
