module {
  sdy.mesh @mesh = <["x"=8, "w"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}, {name = "w", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  sdy.mesh @mesh_1 = <["w"=8, "x"=2]> {stablehlo.mesh = {axes = [{name = "w", size = 8 : i64}, {name = "x", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}]>}, %arg1: tensor<6x4xf32>, %arg2: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {"w", "z"}, {}]>}, %arg3: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}, {}]>}, %arg4: tensor<6x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x"}, {}, {}]>}, %arg5: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}, {}]>}, %arg6: tensor<4x4x8xf32>, %arg7: tensor<4x12x4xf32>, %arg8: tensor<16x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "w"}, {}, {}]>}, %arg9: tensor<12x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"z"}]>}, %arg10: tensor<12x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w"}, {}, {}]>}, %arg11: tensor<12x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}, {}]>}, %arg12: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w"}]>}, %arg13: tensor<12x4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"z"}]>}, %arg14: tensor<12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, %arg15: tensor<12x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg16: tensor<2x4x12xf32>, %arg17: tensor<8x4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"w"}, {}]>}, %arg18: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"z"}]>}, %arg19: tensor<12x2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg20: tensor<12x12x8xf32>, %arg21: tensor<12x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg22: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"w"}, {"x":(1)4}]>}, %arg23: tensor<2x2x2xf32>, %arg24: tensor<512xf32>, %arg25: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, %arg26: tensor<16x4xf32>, %arg27: tensor<4x12x4xf32>, %arg28: tensor<4x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"w"}]>}, %arg29: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg30: tensor<4x8x2xf32>, %arg31: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg32: tensor<4x8x16xf32>, %arg33: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg34: tensor<4xf32>, %arg35: tensor<24x16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg36: tensor<4x4xf32>, %arg37: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{}]>}, %arg38: tensor<4x12x4xf32>, %arg39: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}]>}, %arg40: tensor<4xf32>, %arg41: tensor<2x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg42: tensor<16xf32>) -> (tensor<12x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}, tensor<12x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, tensor<12x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"w"}, {}]>}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<6x4xf32>) -> tensor<6x4x16xf32>
    %1 = stablehlo.exponential %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"w", "z"}, {}]>]>} : tensor<4x12x4xf32>
    %2 = stablehlo.minimum %arg2, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", "x":(2)4}, {}]>]>} : tensor<4x12x4xf32>
    %3 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w"}]>]>} : (tensor<2x16xf32>) -> tensor<16x2xf32>
    %4 = sdy.constant dense<0> : tensor<i32>
    %5 = sdy.constant dense<1> : tensor<i32>
    %6:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %2) : tensor<i32>, tensor<4x12x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {"z", "x":(2)4}, {}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f1(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z", "x":(2)2}, {}]>]>} : (tensor<4x12x4xf32>) -> tensor<4x12x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<4x12x4xf32>
    }
    %7 = stablehlo.minimum %1, %arg3 : tensor<4x12x4xf32>
    %8 = stablehlo.transpose %2, dims = [1, 0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z", "x":(2)4}, {}, {}]>]>} : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
    %9 = stablehlo.add %arg2, %arg2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"w", "z"}, {}]>]>} : tensor<4x12x4xf32>
    %10 = stablehlo.reshape %9 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4, "w", "z"}]>]>} : (tensor<4x12x4xf32>) -> tensor<192xf32>
    %11:3 = stablehlo.while(%iterArg = %4, %iterArg_0 = %7, %iterArg_1 = %10) : tensor<i32>, tensor<4x12x4xf32>, tensor<192xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {}, {}]>, <@mesh, [{"x":(1)4, "w", "z"}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f2(%iterArg_1, %iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4, "w", "z"}]>]>} : (tensor<192xf32>, tensor<4x12x4xf32>) -> tensor<192xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %iterArg_0, %84 : tensor<i32>, tensor<4x12x4xf32>, tensor<192xf32>
    }
    %12 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.reduce(%8 init: %12) applies stablehlo.add across dimensions = [2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}]>]>} : (tensor<12x4x4xf32>, tensor<f32>) -> tensor<12x4xf32>
    %14:2 = call @f3(%13, %11#2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>, <@mesh, [{"z"}]>]>} : (tensor<12x4xf32>, tensor<192xf32>) -> (tensor<4x12xf32>, tensor<4xf32>)
    %15 = stablehlo.tanh %14#0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : tensor<4x12xf32>
    %16 = stablehlo.cosine %arg3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {"x":(1)4, "z"}, {}]>]>} : tensor<4x12x4xf32>
    %17 = stablehlo.cosine %16 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {"x":(1)4, "z"}, {}]>]>} : tensor<4x12x4xf32>
    %18 = sdy.constant dense<1.000000e+00> : tensor<16x2xf32>
    %19 = stablehlo.divide %3, %18 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<16x2xf32>
    %20 = stablehlo.multiply %19, %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{}, {}]>]>} : tensor<16x2xf32>
    %21 = stablehlo.sqrt %arg7 : tensor<4x12x4xf32>
    %22 = stablehlo.minimum %13, %13 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}]>]>} : tensor<12x4xf32>
    %23 = stablehlo.exponential %21 : tensor<4x12x4xf32>
    %24 = stablehlo.tanh %22 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}]>]>} : tensor<12x4xf32>
    %25 = sdy.constant dense<3> : tensor<i32>
    %26:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %23) : tensor<i32>, tensor<4x12x4xf32>
    cond {
      %84 = stablehlo.compare LT, %iterArg, %25, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f7(%iterArg_0) : (tensor<4x12x4xf32>) -> tensor<4x12x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<4x12x4xf32>
    }
    %27 = stablehlo.dot_general %26#1, %arg6, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x12x4xf32>, tensor<4x4x8xf32>) -> tensor<4x12x8xf32>
    %28 = stablehlo.broadcast_in_dim %20, dims = [0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w"}, {"z"}, {}]>]>} : (tensor<16x2xf32>) -> tensor<16x16x2xf32>
    %29 = sdy.constant dense<2> : tensor<i32>
    %30:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %27) : tensor<i32>, tensor<4x12x8xf32>
    cond {
      %84 = stablehlo.compare LT, %iterArg, %29, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f8(%iterArg_0) : (tensor<4x12x8xf32>) -> tensor<4x12x8xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<4x12x8xf32>
    }
    %31 = stablehlo.dot_general %28, %arg8, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w"}, {"z"}, {}]>]>} : (tensor<16x16x2xf32>, tensor<16x2x4xf32>) -> tensor<16x16x4xf32>
    %32 = stablehlo.minimum %31, %31 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w"}, {"z"}, {}]>]>} : tensor<16x16x4xf32>
    %33 = stablehlo.reshape %32 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w", "z"}, {}]>]>} : (tensor<16x16x4xf32>) -> tensor<256x4xf32>
    %34 = stablehlo.transpose %9, dims = [1, 0, 2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}]>]>} : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
    %35 = stablehlo.reduce(%33 init: %12) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w", "z"}]>]>} : (tensor<256x4xf32>, tensor<f32>) -> tensor<256xf32>
    %36 = sdy.reshard %34 <@mesh, [{}, {}, {}]> : tensor<12x4x4xf32>
    %37 = stablehlo.transpose %17, dims = [1, 2, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4, "z"}, {}, {"w"}]>]>} : (tensor<4x12x4xf32>) -> tensor<12x4x4xf32>
    %38 = stablehlo.dot_general %37, %arg9, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : (tensor<12x4x4xf32>, tensor<12x4x8xf32>) -> tensor<12x4x8xf32>
    %39 = stablehlo.dot_general %38, %arg11, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : (tensor<12x4x8xf32>, tensor<12x8x8xf32>) -> tensor<12x4x8xf32>
    %40 = stablehlo.exponential %39 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : tensor<12x4x8xf32>
    %41 = stablehlo.reduce(%arg13 init: %12) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}]>]>} : (tensor<12x4x4xf32>, tensor<f32>) -> tensor<12x4xf32>
    %42 = stablehlo.reshape %41 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}, {}]>]>} : (tensor<12x4xf32>) -> tensor<12x2x2xf32>
    %43 = stablehlo.concatenate %41, %24, %arg14, dim = 1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}]>]>} : (tensor<12x4xf32>, tensor<12x4xf32>, tensor<12x4xf32>) -> tensor<12x12xf32>
    %44 = stablehlo.dot_general %42, %arg15, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}, {}]>]>} : (tensor<12x2x2xf32>, tensor<12x2x8xf32>) -> tensor<12x2x8xf32>
    %45 = stablehlo.abs %arg15 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : tensor<12x2x8xf32>
    %46 = stablehlo.dot_general %44, %arg11, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {"z"}, {}]>]>} : (tensor<12x2x8xf32>, tensor<12x8x8xf32>) -> tensor<12x2x8xf32>
    %47 = stablehlo.negate %45 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : tensor<12x2x8xf32>
    %48 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} dense<1.000000e+00> : tensor<12x8x4xf32>
    %49 = stablehlo.dot_general %47, %48, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}]>]>} : (tensor<12x2x8xf32>, tensor<12x8x4xf32>) -> tensor<12x2x4xf32>
    %50 = stablehlo.reshape %arg16 : (tensor<2x4x12xf32>) -> tensor<2x48xf32>
    %51 = stablehlo.dot_general %49, %36, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : (tensor<12x2x4xf32>, tensor<12x4x4xf32>) -> tensor<12x2x4xf32>
    %52 = stablehlo.slice %51 [0:12, 0:2, 0:2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : (tensor<12x2x4xf32>) -> tensor<12x2x2xf32>
    %53 = stablehlo.subtract %51, %arg18 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x4xf32>
    %54 = stablehlo.subtract %52, %arg19 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x2xf32>
    %55 = stablehlo.dot_general %arg18, %34, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : (tensor<12x2x4xf32>, tensor<12x4x4xf32>) -> tensor<12x2x4xf32>
    %56:3 = stablehlo.while(%iterArg = %4, %iterArg_0 = %54, %iterArg_1 = %53) : tensor<i32>, tensor<12x2x2xf32>, tensor<12x2x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x":(1)4}, {}, {"z"}]>, <@mesh, [{"x":(1)4}, {}, {"z"}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %29, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f11(%iterArg_1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : (tensor<12x2x4xf32>) -> tensor<12x2x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %iterArg_0, %84 : tensor<i32>, tensor<12x2x2xf32>, tensor<12x2x4xf32>
    }
    %57 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} dense<1.000000e+00> : tensor<12x2x2xf32>
    %58 = stablehlo.subtract %54, %57 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x2xf32>
    %59 = stablehlo.divide %58, %58 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x2xf32>
    %60 = stablehlo.dot_general %59, %46, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : (tensor<12x2x2xf32>, tensor<12x2x8xf32>) -> tensor<12x2x8xf32>
    %61 = stablehlo.multiply %60, %arg21 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {}]>]>} : tensor<12x2x8xf32>
    %62 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w", "z"}]>]>} dense<1.000000e+00> : tensor<256xf32>
    %63 = stablehlo.subtract %62, %35 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w", "z"}]>]>} : tensor<256xf32>
    %64 = stablehlo.concatenate %63, %63, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "w", "z"}]>]>} : (tensor<256xf32>, tensor<256xf32>) -> tensor<512xf32>
    %65 = stablehlo.dot_general %arg22, %40, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {"w"}, {}]>]>} : (tensor<12x2x4xf32>, tensor<12x4x8xf32>) -> tensor<12x2x8xf32>
    %66 = sdy.reshard %15 <@mesh_1, [{"w"}, {}]> : tensor<4x12xf32>
    %67 = stablehlo.cosine %66 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<4x12xf32>
    %68 = stablehlo.reshape %67 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w"}, {}]>]>} : (tensor<4x12xf32>) -> tensor<4x3x4xf32>
    %69 = sdy.constant dense<4> : tensor<i32>
    %70:3 = stablehlo.while(%iterArg = %4, %iterArg_0 = %64, %iterArg_1 = %68) : tensor<i32>, tensor<512xf32>, tensor<4x3x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"x", "w", "z"}]>, <@mesh, [{}, {"w"}, {}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %69, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f12(%iterArg_1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}]>]>} : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %iterArg_0, %84 : tensor<i32>, tensor<512xf32>, tensor<4x3x4xf32>
    }
    %71:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %68) : tensor<i32>, tensor<4x3x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {"w"}, {}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %29, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f13(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}]>]>} : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<4x3x4xf32>
    }
    %72:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %68) : tensor<i32>, tensor<4x3x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {"w"}, {}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %29, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f14(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {}]>]>} : (tensor<4x3x4xf32>) -> tensor<4x3x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<4x3x4xf32>
    }
    %73 = call @f15(%50) : (tensor<2x48xf32>) -> tensor<2x48xf32>
    %74 = stablehlo.tanh %49 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}]>]>} : tensor<12x2x4xf32>
    %75:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %74) : tensor<i32>, tensor<12x2x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{}, {}, {"x"}]>]>}
    cond {
      %84 = stablehlo.compare LT, %iterArg, %69, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f16(%iterArg_0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x":(1)4}]>]>} : (tensor<12x2x4xf32>) -> tensor<12x2x4xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<12x2x4xf32>
    }
    %76 = stablehlo.maximum %73, %50 : tensor<2x48xf32>
    %77:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %76) : tensor<i32>, tensor<2x48xf32>
    cond {
      %84 = stablehlo.compare LT, %iterArg, %69, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f17(%iterArg_0) : (tensor<2x48xf32>) -> tensor<2x48xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<2x48xf32>
    }
    %78 = stablehlo.divide %55, %56#2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x4xf32>
    %79 = stablehlo.reshape %78 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}]>]>} : (tensor<12x2x4xf32>) -> tensor<12x8xf32>
    %80 = stablehlo.dot_general %79, %arg5, contracting_dims = [1] x [0] : (tensor<12x8xf32>, tensor<8x8xf32>) -> tensor<12x8xf32>
    %81:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %80) : tensor<i32>, tensor<12x8xf32>
    cond {
      %84 = stablehlo.compare LT, %iterArg, %69, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f18(%iterArg_0) : (tensor<12x8xf32>) -> tensor<12x8xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<12x8xf32>
    }
    %82 = stablehlo.reshape %0 : (tensor<6x4x16xf32>) -> tensor<6x64xf32>
    %83:2 = stablehlo.while(%iterArg = %4, %iterArg_0 = %82) : tensor<i32>, tensor<6x64xf32>
    cond {
      %84 = stablehlo.compare LT, %iterArg, %5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %84 : tensor<i1>
    } do {
      %84 = func.call @f21(%iterArg_0) : (tensor<6x64xf32>) -> tensor<6x64xf32>
      %85 = stablehlo.add %iterArg, %5 : tensor<i32>
      stablehlo.return %85, %84 : tensor<i32>, tensor<6x64xf32>
    }
    return %43, %61, %65 : tensor<12x12xf32>, tensor<12x2x8xf32>, tensor<12x2x8xf32>
  }
  func.func private @f1(%arg0: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z", "x":(2)2}, {}]>}) -> (tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z", "x":(2)2}, {}]>}) {
    return %arg0 : tensor<4x12x4xf32>
  }
  func.func private @f2(%arg0: tensor<192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4, "w", "z"}]>}, %arg1: tensor<4x12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4, "w", "z"}]>}) {
    %0 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4, "w", "z"}]>]>} dense<1.000000e+00> : tensor<192xf32>
    return %0 : tensor<192xf32>
  }
  func.func private @f3(%arg0: tensor<12x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {"z"}]>}, %arg1: tensor<192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4, "w", "z"}]>}) -> (tensor<4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}, tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>}) {
    %0 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}]>]>} : (tensor<12x4xf32>, tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.transpose %arg0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>]>} : (tensor<12x4xf32>) -> tensor<4x12xf32>
    return %2, %1 : tensor<4x12xf32>, tensor<4xf32>
  }
  func.func private @f7(%arg0: tensor<4x12x4xf32>) -> tensor<4x12x4xf32> {
    %0 = stablehlo.abs %arg0 : tensor<4x12x4xf32>
    return %0 : tensor<4x12x4xf32>
  }
  func.func private @f8(%arg0: tensor<4x12x8xf32>) -> tensor<4x12x8xf32> {
    %0 = sdy.constant dense<1.000000e+00> : tensor<4x12x8xf32>
    %1 = stablehlo.divide %arg0, %0 : tensor<4x12x8xf32>
    return %1 : tensor<4x12x8xf32>
  }
  func.func private @f11(%arg0: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {}, {"z"}]>}) -> (tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {}, {"z"}]>}) {
    %0 = stablehlo.divide %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}, {}, {"z"}]>]>} : tensor<12x2x4xf32>
    return %0 : tensor<12x2x4xf32>
  }
  func.func private @f12(%arg0: tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
    %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w"}, {}]>]>} : tensor<4x3x4xf32>
    return %0 : tensor<4x3x4xf32>
  }
  func.func private @f13(%arg0: tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
    return %arg0 : tensor<4x3x4xf32>
  }
  func.func private @f14(%arg0: tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<4x3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
    %0 = stablehlo.maximum %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w"}, {}]>]>} : tensor<4x3x4xf32>
    %1 = stablehlo.maximum %0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"w"}, {}]>]>} : tensor<4x3x4xf32>
    return %1 : tensor<4x3x4xf32>
  }
  func.func private @f15(%arg0: tensor<2x48xf32>) -> tensor<2x48xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<2x48xf32>
    return %0 : tensor<2x48xf32>
  }
  func.func private @f16(%arg0: tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x":(1)4}]>}) -> (tensor<12x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x":(1)4}]>}) {
    %0 = stablehlo.cosine %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}]>]>} : tensor<12x2x4xf32>
    return %0 : tensor<12x2x4xf32>
  }
  func.func private @f17(%arg0: tensor<2x48xf32>) -> tensor<2x48xf32> {
    %0 = stablehlo.divide %arg0, %arg0 : tensor<2x48xf32>
    return %0 : tensor<2x48xf32>
  }
  func.func private @f18(%arg0: tensor<12x8xf32>) -> tensor<12x8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<12x8xf32>
    return %0 : tensor<12x8xf32>
  }
  func.func private @f21(%arg0: tensor<6x64xf32>) -> tensor<6x64xf32> {
    return %arg0 : tensor<6x64xf32>
  }
}
