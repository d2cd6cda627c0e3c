// FLAGS: -sdy-propagation-pipeline
// A sub-axis chain: a write after position 0 must follow the proposal's own units.
// The reduce at line 37 (%10 as `sdylog explain` names it) holds "x":(1)2, "x":(2)2
// in dim 0 (through the minimum at line 46) while its operand, the transpose at
// line 21, holds "z", "x":(2)4 there. Shardy leaves the result at "x":(1)4 ([x:(1)4]
// is no prefix of [z, x:(2)4]); the rules appended "x":(4)2 from the operand because
// the unit before it, "x":(2)2, matches, though the units before that do not: the
// result became "x" and the difference spread to 25 values (fixed in core.dl). Shrunk from generated
// program seed 30 (300 ops) with tests/generators/shrink.py (no smaller program
// found by hand yet).
sdy.mesh @mesh = <["x"=8, "w"=2, "z"=2]>
sdy.mesh @mesh_1 = <["w"=8, "x"=2]>
func.func @main(%arg1: tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {?}]>}, %arg2: tensor<6x4xf32>, %arg3: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {"w", "z", ?}, {}]>}, %arg21: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {"x":(1)4, "z", ?}, {?}]>}, %arg44: tensor<6x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x"}, {?}, {?}]>}, %arg60: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {?}], replicated={"w"}>}, %arg64: tensor<4x4x8xf32>, %arg67: tensor<4x12x4xf32>, %arg102: tensor<16x2x4xf32>, %arg117: tensor<12x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"z", ?}]>}, %arg120: tensor<12x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w"}, {}, {"x", ?}]>}, %arg122: tensor<12x8x8xf32>, %arg131: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w", ?}]>}, %arg141: tensor<12x4x4xf32>, %arg148: tensor<12x4xf32>, %arg151: tensor<12x2x8xf32>, %arg169: tensor<2x4x12xf32>, %arg181: tensor<8x4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"w"}p2, {}]>}, %arg187: tensor<12x2x4xf32>, %arg189: tensor<12x2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}p1, {"x":(2)4, ?}p1], replicated={"w"}>}, %arg208: tensor<12x12x8xf32>, %arg209: tensor<12x2x8xf32>, %arg219: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}, {"x"}]>}, %arg288: tensor<2x2x2xf32>, %arg296: tensor<512xf32>, %arg303: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"z", ?}]>}, %arg312: tensor<16x4xf32>, %arg355: tensor<4x12x4xf32>, %arg357: tensor<4x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}, {"w", ?}]>}, %arg360: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}], replicated={"z"}>}, %arg367: tensor<4x8x2xf32>, %arg382: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}p1, {?}]>}, %arg385: tensor<4x8x16xf32>, %arg392: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg396: tensor<4xf32>, %arg398: tensor<24x16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {}]>}, %arg403: tensor<4x4xf32>, %arg406: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{?}]>}, %arg408: tensor<4x12x4xf32>, %arg410: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", "z", ?}]>}, %arg421: tensor<4xf32>, %arg430: tensor<2x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", "w", ?}, {?}]>}, %arg448: tensor<16xf32>) -> (tensor<12x12xf32>, tensor<12x2x8xf32>, tensor<12x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"w"}, {?}]>}) {
  %v6 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<6x4xf32>) -> tensor<6x4x16xf32>
  %v7 = stablehlo.exponential %arg3 : tensor<4x12x4xf32>
  %v8 = stablehlo.minimum %arg3, %arg3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", "x":(2)4, ?}, {?}]>]>} : tensor<4x12x4xf32>
  %v9 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<2x16xf32>) -> tensor<16x2xf32>
  %c10 = stablehlo.constant dense<0> : tensor<i32>
  %c11 = stablehlo.constant dense<1> : tensor<i32>
  %c12 = stablehlo.constant dense<1> : tensor<i32>
  %w20:2 = stablehlo.while(%i13 = %c10, %it14 = %v8) : tensor<i32>, tensor<4x12x4xf32>
  cond {
    %p19 = stablehlo.compare LT, %i13, %c12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p19 : tensor<i1>
  } do {
    %call15 = func.call @f1(%it14) : (tensor<4x12x4xf32>) -> tensor<4x12x4xf32>
    %i18 = stablehlo.add %i13, %c11 : tensor<i32>
    stablehlo.return %i18, %call15 : tensor<i32>, tensor<4x12x4xf32>
  }
  %v22 = stablehlo.minimum %v7, %arg21 : tensor<4x12x4xf32>
  %v23 = stablehlo.transpose %v8, dims = [1, 0, 2] : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
  %v24 = stablehlo.add %arg3, %arg3 : tensor<4x12x4xf32>
  %v25 = stablehlo.reshape %v24 : (tensor<4x12x4xf32>) -> tensor<192xf32>
  %c26 = stablehlo.constant dense<0> : tensor<i32>
  %c27 = stablehlo.constant dense<1> : tensor<i32>
  %c28 = stablehlo.constant dense<1> : tensor<i32>
  %w36:3 = stablehlo.while(%i29 = %c26, %it30 = %v22, %it31 = %v25) : tensor<i32>, tensor<4x12x4xf32>, tensor<192xf32>
  cond {
    %p35 = stablehlo.compare LT, %i29, %c28, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p35 : tensor<i1>
  } do {
    %call32 = func.call @f2(%it31, %it30) : (tensor<192xf32>, tensor<4x12x4xf32>) -> tensor<192xf32>
    %i34 = stablehlo.add %i29, %c27 : tensor<i32>
    stablehlo.return %i34, %it30, %call32 : tensor<i32>, tensor<4x12x4xf32>, tensor<192xf32>
  }
  %c39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v40 = stablehlo.reduce(%v23 init: %c39) applies stablehlo.add across dimensions = [2] : (tensor<12x4x4xf32>, tensor<f32>) -> tensor<12x4xf32>
  %call41:2 = func.call @f3(%v40, %w36#2) : (tensor<12x4xf32>, tensor<192xf32>) -> (tensor<4x12xf32>, tensor<4xf32>)
  %v43 = stablehlo.tanh %call41#0 : tensor<4x12xf32>
  %v50 = stablehlo.cosine %arg21 : tensor<4x12x4xf32>
  %v54 = stablehlo.cosine %v50 : tensor<4x12x4xf32>
  %c56 = stablehlo.constant dense<1.000000e+00> : tensor<16x2xf32>
  %v57 = stablehlo.divide %v9, %c56 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {}]>]>} : tensor<16x2xf32>
  %v61 = stablehlo.multiply %v57, %v9 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{?}, {}]>]>} : tensor<16x2xf32>
  %v70 = stablehlo.sqrt %arg67 : tensor<4x12x4xf32>
  %v71 = stablehlo.minimum %v40, %v40 : tensor<12x4xf32>
  %v73 = stablehlo.exponential %v70 : tensor<4x12x4xf32>
  %v75 = stablehlo.tanh %v71 : tensor<12x4xf32>
  %c77 = stablehlo.constant dense<0> : tensor<i32>
  %c78 = stablehlo.constant dense<1> : tensor<i32>
  %c79 = stablehlo.constant dense<3> : tensor<i32>
  %w85:2 = stablehlo.while(%i80 = %c77, %it81 = %v73) : tensor<i32>, tensor<4x12x4xf32>
  cond {
    %p84 = stablehlo.compare LT, %i80, %c79, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p84 : tensor<i1>
  } do {
    %call82 = func.call @f7(%it81) : (tensor<4x12x4xf32>) -> tensor<4x12x4xf32>
    %i83 = stablehlo.add %i80, %c78 : tensor<i32>
    stablehlo.return %i83, %call82 : tensor<i32>, tensor<4x12x4xf32>
  }
  %v88 = stablehlo.dot_general %w85#1, %arg64, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x12x4xf32>, tensor<4x4x8xf32>) -> tensor<4x12x8xf32>
  %v89 = stablehlo.broadcast_in_dim %v61, dims = [0, 2] : (tensor<16x2xf32>) -> tensor<16x16x2xf32>
  %c90 = stablehlo.constant dense<0> : tensor<i32>
  %c91 = stablehlo.constant dense<1> : tensor<i32>
  %c92 = stablehlo.constant dense<2> : tensor<i32>
  %w101:2 = stablehlo.while(%i93 = %c90, %it94 = %v88) : tensor<i32>, tensor<4x12x8xf32>
  cond {
    %p100 = stablehlo.compare LT, %i93, %c92, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p100 : tensor<i1>
  } do {
    %call95 = func.call @f8(%it94) : (tensor<4x12x8xf32>) -> tensor<4x12x8xf32>
    %i99 = stablehlo.add %i93, %c91 : tensor<i32>
    stablehlo.return %i99, %call95 : tensor<i32>, tensor<4x12x8xf32>
  }
  %v103 = stablehlo.dot_general %v89, %arg102, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<16x16x2xf32>, tensor<16x2x4xf32>) -> tensor<16x16x4xf32>
  %v106 = stablehlo.minimum %v103, %v103 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w"}, {"z", ?}, {?}]>]>} : tensor<16x16x4xf32>
  %v107 = stablehlo.reshape %v106 : (tensor<16x16x4xf32>) -> tensor<256x4xf32>
  %v109 = stablehlo.transpose %v24, dims = [1, 0, 2] : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
  %c110 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v111 = stablehlo.reduce(%v107 init: %c110) applies stablehlo.add across dimensions = [1] : (tensor<256x4xf32>, tensor<f32>) -> tensor<256xf32>
  %v114 = sdy.sharding_constraint %v109 <@mesh, [{}, {}, {}]> : tensor<12x4x4xf32>
  %v115 = stablehlo.transpose %v54, dims = [1, 2, 0] : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
  %v118 = stablehlo.dot_general %v115, %arg117, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x4x4xf32>, tensor<12x4x8xf32>) -> tensor<12x4x8xf32>
  %v123 = stablehlo.dot_general %v118, %arg122, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x4x8xf32>, tensor<12x8x8xf32>) -> tensor<12x4x8xf32>
  %v127 = stablehlo.exponential %v123 : tensor<12x4x8xf32>
  %c144 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v145 = stablehlo.reduce(%arg141 init: %c144) applies stablehlo.add across dimensions = [1] : (tensor<12x4x4xf32>, tensor<f32>) -> tensor<12x4xf32>
  %v146 = stablehlo.reshape %v145 : (tensor<12x4xf32>) -> tensor<12x2x2xf32>
  %v149 = stablehlo.concatenate %v145, %v75, %arg148, dim = 1 : (tensor<12x4xf32>, tensor<12x4xf32>, tensor<12x4xf32>) -> tensor<12x12xf32>
  %v152 = stablehlo.dot_general %v146, %arg151, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x2x2xf32>, tensor<12x2x8xf32>) -> tensor<12x2x8xf32>
  %v155 = stablehlo.abs %arg151 : tensor<12x2x8xf32>
  %v156 = stablehlo.dot_general %v152, %arg122, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x2x8xf32>, tensor<12x8x8xf32>) -> tensor<12x2x8xf32>
  %v159 = stablehlo.negate %v155 : tensor<12x2x8xf32>
  %c162 = stablehlo.constant dense<1.000000e+00> : tensor<12x8x4xf32>
  %v163 = stablehlo.dot_general %v159, %c162, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x2x8xf32>, tensor<12x8x4xf32>) -> tensor<12x2x4xf32>
  %v173 = stablehlo.reshape %arg169 : (tensor<2x4x12xf32>) -> tensor<2x48xf32>
  %v183 = stablehlo.dot_general %v163, %v114, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x2x4xf32>, tensor<12x4x4xf32>) -> tensor<12x2x4xf32>
  %v185 = stablehlo.slice %v183 [0:12, 0:2, 0:2] : (tensor<12x2x4xf32>) -> tensor<12x2x2xf32>
  %v188 = stablehlo.subtract %v183, %arg187 : tensor<12x2x4xf32>
  %v190 = stablehlo.subtract %v185, %arg189 : tensor<12x2x2xf32>
  %v191 = stablehlo.dot_general %arg187, %v109, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {}, {}]>]>} : (tensor<12x2x4xf32>, tensor<12x4x4xf32>) -> tensor<12x2x4xf32>
  %c192 = stablehlo.constant dense<0> : tensor<i32>
  %c193 = stablehlo.constant dense<1> : tensor<i32>
  %c194 = stablehlo.constant dense<2> : tensor<i32>
  %w202:3 = stablehlo.while(%i195 = %c192, %it196 = %v190, %it197 = %v188) : tensor<i32>, tensor<12x2x2xf32>, tensor<12x2x4xf32>
  cond {
    %p201 = stablehlo.compare LT, %i195, %c194, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p201 : tensor<i1>
  } do {
    %call198 = func.call @f11(%it197) : (tensor<12x2x4xf32>) -> tensor<12x2x4xf32>
    %i200 = stablehlo.add %i195, %c193 : tensor<i32>
    stablehlo.return %i200, %it196, %call198 : tensor<i32>, tensor<12x2x2xf32>, tensor<12x2x4xf32>
  }
  %c203 = stablehlo.constant dense<1.000000e+00> : tensor<12x2x2xf32>
  %v204 = stablehlo.subtract %v190, %c203 : tensor<12x2x2xf32>
  %v206 = stablehlo.divide %v204, %v204 : tensor<12x2x2xf32>
  %v207 = stablehlo.dot_general %v206, %v156, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}, {}]>]>} : (tensor<12x2x2xf32>, tensor<12x2x8xf32>) -> tensor<12x2x8xf32>
  %v210 = stablehlo.multiply %v207, %arg209 : tensor<12x2x8xf32>
  %c216 = stablehlo.constant dense<1.000000e+00> : tensor<256xf32>
  %v217 = stablehlo.subtract %c216, %v111 : tensor<256xf32>
  %v218 = stablehlo.concatenate %v217, %v217, dim = 0 : (tensor<256xf32>, tensor<256xf32>) -> tensor<512xf32>
  %v222 = stablehlo.dot_general %arg219, %v127, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<12x2x4xf32>, tensor<12x4x8xf32>) -> tensor<12x2x8xf32>
  %v230 = sdy.sharding_constraint %v43 <@mesh_1, [{"w", ?}, {}], replicated={"x"}> : tensor<4x12xf32>
  %v231 = stablehlo.cosine %v230 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x12xf32>
  %v232 = stablehlo.reshape %v231 : (tensor<4x12xf32>) -> tensor<4x3x4xf32>
  %c233 = stablehlo.constant dense<0> : tensor<i32>
  %c234 = stablehlo.constant dense<1> : tensor<i32>
  %c235 = stablehlo.constant dense<4> : tensor<i32>
  %w242:3 = stablehlo.while(%i236 = %c233, %it237 = %v218, %it238 = %v232) : tensor<i32>, tensor<512xf32>, tensor<4x3x4xf32>
  cond {
    %p241 = stablehlo.compare LT, %i236, %c235, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p241 : tensor<i1>
  } do {
    %call239 = func.call @f12(%it238) : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
    %i240 = stablehlo.add %i236, %c234 : tensor<i32>
    stablehlo.return %i240, %it237, %call239 : tensor<i32>, tensor<512xf32>, tensor<4x3x4xf32>
  }
  %c243 = stablehlo.constant dense<0> : tensor<i32>
  %c244 = stablehlo.constant dense<1> : tensor<i32>
  %c245 = stablehlo.constant dense<2> : tensor<i32>
  %w253:2 = stablehlo.while(%i246 = %c243, %it247 = %v232) : tensor<i32>, tensor<4x3x4xf32>
  cond {
    %p252 = stablehlo.compare LT, %i246, %c245, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p252 : tensor<i1>
  } do {
    %call248 = func.call @f13(%it247) : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
    %i251 = stablehlo.add %i246, %c244 : tensor<i32>
    stablehlo.return %i251, %call248 : tensor<i32>, tensor<4x3x4xf32>
  }
  %c254 = stablehlo.constant dense<0> : tensor<i32>
  %c255 = stablehlo.constant dense<1> : tensor<i32>
  %c256 = stablehlo.constant dense<2> : tensor<i32>
  %w263:2 = stablehlo.while(%i257 = %c254, %it258 = %v232) : tensor<i32>, tensor<4x3x4xf32>
  cond {
    %p262 = stablehlo.compare LT, %i257, %c256, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p262 : tensor<i1>
  } do {
    %call259 = func.call @f14(%it258) : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
    %i261 = stablehlo.add %i257, %c255 : tensor<i32>
    stablehlo.return %i261, %call259 : tensor<i32>, tensor<4x3x4xf32>
  }
  %call265 = func.call @f15(%v173) : (tensor<2x48xf32>) -> tensor<2x48xf32>
  %v276 = stablehlo.tanh %v163 : tensor<12x2x4xf32>
  %c277 = stablehlo.constant dense<0> : tensor<i32>
  %c278 = stablehlo.constant dense<1> : tensor<i32>
  %c279 = stablehlo.constant dense<4> : tensor<i32>
  %w287:2 = stablehlo.while(%i280 = %c277, %it281 = %v276) : tensor<i32>, tensor<12x2x4xf32>
  cond {
    %p286 = stablehlo.compare LT, %i280, %c279, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p286 : tensor<i1>
  } do {
    %call282 = func.call @f16(%it281) : (tensor<12x2x4xf32>) -> tensor<12x2x4xf32>
    %i285 = stablehlo.add %i280, %c278 : tensor<i32>
    stablehlo.return %i285, %call282 : tensor<i32>, tensor<12x2x4xf32>
  }
  %v315 = stablehlo.maximum %call265, %v173 : tensor<2x48xf32>
  %c317 = stablehlo.constant dense<0> : tensor<i32>
  %c318 = stablehlo.constant dense<1> : tensor<i32>
  %c319 = stablehlo.constant dense<4> : tensor<i32>
  %w327:2 = stablehlo.while(%i320 = %c317, %it321 = %v315) : tensor<i32>, tensor<2x48xf32>
  cond {
    %p326 = stablehlo.compare LT, %i320, %c319, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p326 : tensor<i1>
  } do {
    %call322 = func.call @f17(%it321) : (tensor<2x48xf32>) -> tensor<2x48xf32>
    %i325 = stablehlo.add %i320, %c318 : tensor<i32>
    stablehlo.return %i325, %call322 : tensor<i32>, tensor<2x48xf32>
  }
  %v335 = stablehlo.divide %v191, %w202#2 : tensor<12x2x4xf32>
  %v336 = stablehlo.reshape %v335 : (tensor<12x2x4xf32>) -> tensor<12x8xf32>
  %v339 = stablehlo.dot_general %v336, %arg60, contracting_dims = [1] x [0] : (tensor<12x8xf32>, tensor<8x8xf32>) -> tensor<12x8xf32>
  %c343 = stablehlo.constant dense<0> : tensor<i32>
  %c344 = stablehlo.constant dense<1> : tensor<i32>
  %c345 = stablehlo.constant dense<4> : tensor<i32>
  %w353:2 = stablehlo.while(%i346 = %c343, %it347 = %v339) : tensor<i32>, tensor<12x8xf32>
  cond {
    %p352 = stablehlo.compare LT, %i346, %c345, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p352 : tensor<i1>
  } do {
    %call348 = func.call @f18(%it347) : (tensor<12x8xf32>) -> tensor<12x8xf32>
    %i351 = stablehlo.add %i346, %c344 : tensor<i32>
    stablehlo.return %i351, %call348 : tensor<i32>, tensor<12x8xf32>
  }
  %v445 = stablehlo.reshape %v6 : (tensor<6x4x16xf32>) -> tensor<6x64xf32>
  %c449 = stablehlo.constant dense<0> : tensor<i32>
  %c450 = stablehlo.constant dense<1> : tensor<i32>
  %c451 = stablehlo.constant dense<1> : tensor<i32>
  %w458:2 = stablehlo.while(%i452 = %c449, %it453 = %v445) : tensor<i32>, tensor<6x64xf32>
  cond {
    %p457 = stablehlo.compare LT, %i452, %c451, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p457 : tensor<i1>
  } do {
    %call454 = func.call @f21(%it453) : (tensor<6x64xf32>) -> tensor<6x64xf32>
    %i456 = stablehlo.add %i452, %c450 : tensor<i32>
    stablehlo.return %i456, %call454 : tensor<i32>, tensor<6x64xf32>
  }
  return %v149, %v210, %v222 : tensor<12x12xf32>, tensor<12x2x8xf32>, tensor<12x2x8xf32>
}
func.func private @f1(%arg1: tensor<4x12x4xf32>) -> (tensor<4x12x4xf32>) {
  return %arg1 : tensor<4x12x4xf32>
}
func.func private @f2(%arg1: tensor<192xf32>, %arg2: tensor<4x12x4xf32>) -> (tensor<192xf32>) {
  %c3 = stablehlo.constant dense<1.000000e+00> : tensor<192xf32>
  return %c3 : tensor<192xf32>
}
func.func private @f3(%arg1: tensor<12x4xf32>, %arg2: tensor<192xf32>) -> (tensor<4x12xf32>, tensor<4xf32>) {
  %c3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v4 = stablehlo.reduce(%arg1 init: %c3) applies stablehlo.add across dimensions = [0] : (tensor<12x4xf32>, tensor<f32>) -> tensor<4xf32>
  %v5 = stablehlo.transpose %arg1, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : (tensor<12x4xf32>) -> tensor<4x12xf32>
  return %v5, %v4 : tensor<4x12xf32>, tensor<4xf32>
}
func.func private @f4(%arg1: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {"w", ?}, {?}]>}) -> (tensor<4x24x4xf32>) {
  %v2 = stablehlo.concatenate %arg1, %arg1, dim = 1 : (tensor<4x12x4xf32>, tensor<4x12x4xf32>) -> tensor<4x24x4xf32>
  %call3 = func.call @f5(%v2) : (tensor<4x24x4xf32>) -> tensor<4x24x4xf32>
  %v5 = stablehlo.abs %call3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {?}p1, {"z", "x", ?}]>]>} : tensor<4x24x4xf32>
  return %v5 : tensor<4x24x4xf32>
}
func.func private @f5(%arg1: tensor<4x24x4xf32>) -> (tensor<4x24x4xf32>) {
  %c3 = stablehlo.constant dense<1.000000e+00> : tensor<4x24x4xf32>
  %v4 = stablehlo.divide %arg1, %c3 : tensor<4x24x4xf32>
  return %v4 : tensor<4x24x4xf32>
}
func.func private @f6(%arg1: tensor<16x2x16xf32>, %arg2: tensor<16x2x16xf32>) -> (tensor<16x16x2xf32>) {
  %c6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v7 = stablehlo.reduce(%arg2 init: %c6) applies stablehlo.add across dimensions = [2] : (tensor<16x2x16xf32>, tensor<f32>) -> tensor<16x2xf32>
  %v8 = stablehlo.broadcast_in_dim %v7, dims = [1, 2] : (tensor<16x2xf32>) -> tensor<16x16x2xf32>
  return %v8 : tensor<16x16x2xf32>
}
func.func private @f7(%arg1: tensor<4x12x4xf32>) -> (tensor<4x12x4xf32>) {
  %v3 = stablehlo.abs %arg1 : tensor<4x12x4xf32>
  return %v3 : tensor<4x12x4xf32>
}
func.func private @f8(%arg1: tensor<4x12x8xf32>) -> (tensor<4x12x8xf32>) {
  %c2 = stablehlo.constant dense<1.000000e+00> : tensor<4x12x8xf32>
  %v3 = stablehlo.divide %arg1, %c2 : tensor<4x12x8xf32>
  return %v3 : tensor<4x12x8xf32>
}
func.func private @f9(%arg1: tensor<4x2x12xf32>, %arg2: tensor<6x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {?}]>}) -> (tensor<6x4x2xf32>) {
  %c3 = stablehlo.constant dense<1.000000e+00> : tensor<6x4x2xf32>
  %v4 = stablehlo.divide %arg2, %c3 : tensor<6x4x2xf32>
  return %v4 : tensor<6x4x2xf32>
}
func.func private @f10(%arg1: tensor<256x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}]>}) -> (tensor<256x2xf32>) {
  %c3 = stablehlo.constant dense<1.000000e+00> : tensor<4x2xf32>
  %v4 = stablehlo.dot_general %arg1, %c3, contracting_dims = [1] x [0] : (tensor<256x4xf32>, tensor<4x2xf32>) -> tensor<256x2xf32>
  %c7 = stablehlo.constant dense<1.000000e+00> : tensor<2x2xf32>
  %v8 = stablehlo.dot_general %v4, %c7, contracting_dims = [1] x [0] : (tensor<256x2xf32>, tensor<2x2xf32>) -> tensor<256x2xf32>
  return %v8 : tensor<256x2xf32>
}
func.func private @f11(%arg1: tensor<12x2x4xf32>) -> (tensor<12x2x4xf32>) {
  %v2 = stablehlo.divide %arg1, %arg1 : tensor<12x2x4xf32>
  return %v2 : tensor<12x2x4xf32>
}
func.func private @f12(%arg1: tensor<4x3x4xf32>) -> (tensor<4x3x4xf32>) {
  %v4 = stablehlo.abs %arg1 : tensor<4x3x4xf32>
  return %v4 : tensor<4x3x4xf32>
}
func.func private @f13(%arg1: tensor<4x3x4xf32>) -> (tensor<4x3x4xf32>) {
  return %arg1 : tensor<4x3x4xf32>
}
func.func private @f14(%arg1: tensor<4x3x4xf32>) -> (tensor<4x3x4xf32>) {
  %v2 = stablehlo.maximum %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"w"}, {}]>]>} : tensor<4x3x4xf32>
  %v4 = stablehlo.maximum %v2, %arg1 : tensor<4x3x4xf32>
  return %v4 : tensor<4x3x4xf32>
}
func.func private @f15(%arg1: tensor<2x48xf32>) -> (tensor<2x48xf32>) {
  %v2 = stablehlo.multiply %arg1, %arg1 : tensor<2x48xf32>
  return %v2 : tensor<2x48xf32>
}
func.func private @f16(%arg1: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"x", ?}]>}) -> (tensor<12x2x4xf32>) {
  %v3 = stablehlo.cosine %arg1 : tensor<12x2x4xf32>
  return %v3 : tensor<12x2x4xf32>
}
func.func private @f17(%arg1: tensor<2x48xf32>) -> (tensor<2x48xf32>) {
  %v2 = stablehlo.divide %arg1, %arg1 : tensor<2x48xf32>
  return %v2 : tensor<2x48xf32>
}
func.func private @f18(%arg1: tensor<12x8xf32>) -> (tensor<12x8xf32>) {
  %v2 = stablehlo.tanh %arg1 : tensor<12x8xf32>
  return %v2 : tensor<12x8xf32>
}
func.func private @f19(%arg1: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {"z"}, {"x", ?}]>}) -> (tensor<12x2x4xf32>) {
  %v3 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {?}, {"w"}]> : tensor<12x2x4xf32>
  return %v3 : tensor<12x2x4xf32>
}
func.func private @f20(%arg1: tensor<48x2xf32>) -> (tensor<144x2xf32>) {
  %c2 = stablehlo.constant dense<1.000000e+00> : tensor<48x2xf32>
  %v3 = stablehlo.concatenate %arg1, %arg1, %c2, dim = 0 : (tensor<48x2xf32>, tensor<48x2xf32>, tensor<48x2xf32>) -> tensor<144x2xf32>
  return %v3 : tensor<144x2xf32>
}
func.func private @f21(%arg1: tensor<6x64xf32>) -> (tensor<6x64xf32>) {
  return %arg1 : tensor<6x64xf32>
}
