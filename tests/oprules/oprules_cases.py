"""Small functions, one op of interest each, covering every branch of the
registry. Shared by the oracle comparison (tests/oprules/test_oracle.py) and
the registry tests. Each value is a whole `func.func` whose name is the key.
"""

SCATTER_ADD = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %b, %a : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })"""

SCATTER_OVERWRITE = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      stablehlo.return %b : tensor<f32>
  })"""

MAX_BODY = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  })"""

GE_BODY = """({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  })"""


def _scatter(name, operand, indices, updates, dims, body=SCATTER_ADD):
    return f"""func.func @{name}(%x: tensor<{operand}>, %i: tensor<{indices}>, %u: tensor<{updates}>) -> tensor<{operand}> {{
  %0 = "stablehlo.scatter"(%x, %i, %u) {body} {{
    scatter_dimension_numbers = #stablehlo.scatter<{dims}>
  }} : (tensor<{operand}>, tensor<{indices}>, tensor<{updates}>) -> tensor<{operand}>
  return %0 : tensor<{operand}>
}}"""


def _gather(name, operand, indices, result, dims, sizes):
    return f"""func.func @{name}(%x: tensor<{operand}>, %i: tensor<{indices}>) -> tensor<{result}> {{
  %0 = "stablehlo.gather"(%x, %i) {{
    dimension_numbers = #stablehlo.gather<{dims}>, slice_sizes = array<i64: {sizes}>
  }} : (tensor<{operand}>, tensor<{indices}>) -> tensor<{result}>
  return %0 : tensor<{result}>
}}"""


def _tensor(dims, element="f32"):
    return f"tensor<{dims}x{element}>" if dims else f"tensor<{element}>"


def _reshape(name, src, dst):
    a, b = _tensor(src), _tensor(dst)
    return f"""func.func @{name}(%x: {a}) -> {b} {{
  %0 = stablehlo.reshape %x : ({a}) -> {b}
  return %0 : {b}
}}"""


def _conv(name, lhs, rhs, out, dims, window="", groups=(1, 1)):
    return f"""func.func @{name}(%x: tensor<{lhs}xf32>, %k: tensor<{rhs}xf32>) -> tensor<{out}xf32> {{
  %0 = stablehlo.convolution(%x, %k) dim_numbers = {dims}, window = {{{window}}}
    {{batch_group_count = {groups[0]} : i64, feature_group_count = {groups[1]} : i64}}
    : (tensor<{lhs}xf32>, tensor<{rhs}xf32>) -> tensor<{out}xf32>
  return %0 : tensor<{out}xf32>
}}"""


def _custom(name, target, ins, outs):
    args = ", ".join(f"%a{i}: tensor<{t}>" for i, t in enumerate(ins))
    uses = ", ".join(f"%a{i}" for i in range(len(ins)))
    res = ", ".join(f"tensor<{t}>" for t in outs)
    ins_t = ", ".join(f"tensor<{t}>" for t in ins)
    n = f":{len(outs)}" if len(outs) > 1 else ""
    rets = ", ".join(f"%0#{i}" for i in range(len(outs))) if len(outs) > 1 else "%0"
    return f"""func.func @{name}({args}) -> ({res}) {{
  %0{n} = stablehlo.custom_call @{target}({uses}) : ({ins_t}) -> ({res})
  return {rets} : {res}
}}"""


CASES = {
    # --- element-wise ---------------------------------------------------------------
    "add_3d": """func.func @add_3d(%x: tensor<6x1x10xf32>) -> tensor<6x1x10xf32> {
  %0 = stablehlo.add %x, %x : tensor<6x1x10xf32>
  return %0 : tensor<6x1x10xf32>
}""",
    "tanh_scalar": """func.func @tanh_scalar(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.tanh %x : tensor<f32>
  return %0 : tensor<f32>
}""",
    "multiply_zero_dim": """func.func @multiply_zero_dim(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}""",
    "compare_convert": """func.func @compare_convert(%x: tensor<5x7xf32>) -> tensor<5x7xi32> {
  %0 = stablehlo.compare LT, %x, %x : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xi1>
  %1 = stablehlo.convert %0 : (tensor<5x7xi1>) -> tensor<5x7xi32>
  return %1 : tensor<5x7xi32>
}""",
    "unary_zoo": """func.func @unary_zoo(%x: tensor<3x5xf32>, %n: tensor<3x5xi32>) -> tensor<3x5xf32> {
  %0 = stablehlo.cbrt %x : tensor<3x5xf32>
  %1 = stablehlo.ceil %0 : tensor<3x5xf32>
  %2 = stablehlo.floor %1 : tensor<3x5xf32>
  %3 = stablehlo.exponential_minus_one %2 : tensor<3x5xf32>
  %4 = stablehlo.log_plus_one %3 : tensor<3x5xf32>
  %5 = stablehlo.logistic %4 : tensor<3x5xf32>
  %6 = stablehlo.round_nearest_afz %5 : tensor<3x5xf32>
  %7 = stablehlo.round_nearest_even %6 : tensor<3x5xf32>
  %8 = stablehlo.rsqrt %7 : tensor<3x5xf32>
  %9 = stablehlo.sign %8 : tensor<3x5xf32>
  %10 = stablehlo.tan %9 : tensor<3x5xf32>
  %11 = stablehlo.reduce_precision %10, format = e5m10 : tensor<3x5xf32>
  %12 = stablehlo.atan2 %11, %x : tensor<3x5xf32>
  %13 = stablehlo.power %12, %x : tensor<3x5xf32>
  %14 = stablehlo.remainder %13, %x : tensor<3x5xf32>
  %15 = stablehlo.count_leading_zeros %n : tensor<3x5xi32>
  %16 = stablehlo.popcnt %15 : tensor<3x5xi32>
  %17 = stablehlo.shift_left %16, %n : tensor<3x5xi32>
  %18 = stablehlo.shift_right_arithmetic %17, %n : tensor<3x5xi32>
  %19 = stablehlo.shift_right_logical %18, %n : tensor<3x5xi32>
  %20 = stablehlo.xor %19, %n : tensor<3x5xi32>
  %21 = stablehlo.not %20 : tensor<3x5xi32>
  %22 = stablehlo.is_finite %14 : (tensor<3x5xf32>) -> tensor<3x5xi1>
  return %14 : tensor<3x5xf32>
}""",
    "complex_parts": """func.func @complex_parts(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.complex %x, %x : tensor<4x6xcomplex<f32>>
  %1 = stablehlo.real %0 : (tensor<4x6xcomplex<f32>>) -> tensor<4x6xf32>
  %2 = stablehlo.imag %0 : (tensor<4x6xcomplex<f32>>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}""",
    "select_scalar_pred": """func.func @select_scalar_pred(%p: tensor<i1>, %x: tensor<3x9xf32>) -> tensor<3x9xf32> {
  %0 = stablehlo.select %p, %x, %x : tensor<i1>, tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}""",
    "clamp_mixed": """func.func @clamp_mixed(%lo: tensor<f32>, %x: tensor<6x2xf32>) -> tensor<6x2xf32> {
  %0 = stablehlo.clamp %lo, %x, %x : (tensor<f32>, tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}""",
    "bitcast_to_narrow": """func.func @bitcast_to_narrow(%x: tensor<6x10xf32>) -> tensor<6x10x2xbf16> {
  %0 = stablehlo.bitcast_convert %x : (tensor<6x10xf32>) -> tensor<6x10x2xbf16>
  return %0 : tensor<6x10x2xbf16>
}""",
    "bitcast_to_wide": """func.func @bitcast_to_wide(%x: tensor<3x4xi8>) -> tensor<3xi32> {
  %0 = stablehlo.bitcast_convert %x : (tensor<3x4xi8>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}""",
    "bitcast_same_width": """func.func @bitcast_same_width(%x: tensor<5x3xf32>) -> tensor<5x3xi32> {
  %0 = stablehlo.bitcast_convert %x : (tensor<5x3xf32>) -> tensor<5x3xi32>
  return %0 : tensor<5x3xi32>
}""",
    "batch_norm_inference_f0": """func.func @batch_norm_inference_f0(%x: tensor<12x5x7xf32>, %s: tensor<12xf32>) -> tensor<12x5x7xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 0 : i64}
    : (tensor<12x5x7xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<12x5x7xf32>
  return %0 : tensor<12x5x7xf32>
}""",
    "sharding_constraint": """sdy.mesh @m = <["x"=2]>
func.func @sharding_constraint(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = sdy.sharding_constraint %x <@m, [{"x"}, {}]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}""",
    # --- collectives ------------------------------------------------------------------
    "all_gather_dim0": """func.func @all_gather_dim0(%x: tensor<3x5xf32>) -> tensor<12x5xf32> {
  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}
    : (tensor<3x5xf32>) -> tensor<12x5xf32>
  return %0 : tensor<12x5xf32>
}""",
    "all_to_all_two_dims": """func.func @all_to_all_two_dims(%x: tensor<6x8x3xf32>) -> tensor<12x4x3xf32> {
  %0 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64,
    replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<6x8x3xf32>) -> tensor<12x4x3xf32>
  return %0 : tensor<12x4x3xf32>
}""",
    "all_to_all_one_dim": """func.func @all_to_all_one_dim(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %0 = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 4 : i64,
    replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}""",
    "reduce_scatter_last": """func.func @reduce_scatter_last(%x: tensor<5x1x16xf32>) -> tensor<5x1x4xf32> {
  %0 = "stablehlo.reduce_scatter"(%x) """ + MAX_BODY + """ {scatter_dimension = 2 : i64,
    replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<5x1x16xf32>) -> tensor<5x1x4xf32>
  return %0 : tensor<5x1x4xf32>
}""",
    "all_reduce_two_operands": """func.func @all_reduce_two_operands(%x: tensor<6x4xf32>, %y: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0:2 = "stablehlo.all_reduce"(%x, %y) """ + MAX_BODY + """ {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
    : (tensor<6x4xf32>, tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>)
  return %0#1 : tensor<6x4xf32>
}""",
    # dimension d of every tensor is factor d, sized after the first result, even across ranks
    "all_reduce_mixed_ranks": """func.func @all_reduce_mixed_ranks(%x: tensor<6x4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "stablehlo.all_reduce"(%x, %y) """ + MAX_BODY + """ {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
    : (tensor<6x4xf32>, tensor<4xf32>) -> (tensor<6x4xf32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}""",
    "collective_permute_and_broadcast": """func.func @collective_permute_and_broadcast(%x: tensor<7x2xf32>) -> tensor<7x2xf32> {
  %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}
    : (tensor<7x2xf32>) -> tensor<7x2xf32>
  %1 = "stablehlo.collective_broadcast"(%0) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
    : (tensor<7x2xf32>) -> tensor<7x2xf32>
  return %1 : tensor<7x2xf32>
}""",
    # --- broadcast, transpose, reverse --------------------------------------------------
    "broadcast_mixed": """func.func @broadcast_mixed(%x: tensor<1x6x3xf32>) -> tensor<4x6x5x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1, 3] : (tensor<1x6x3xf32>) -> tensor<4x6x5x3xf32>
  return %0 : tensor<4x6x5x3xf32>
}""",
    "broadcast_scalar": """func.func @broadcast_scalar(%x: tensor<f32>) -> tensor<2x1x9xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<f32>) -> tensor<2x1x9xf32>
  return %0 : tensor<2x1x9xf32>
}""",
    "broadcast_unit_kept": """func.func @broadcast_unit_kept(%x: tensor<7x1xf32>) -> tensor<1x7x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [1, 0] : (tensor<7x1xf32>) -> tensor<1x7x3xf32>
  return %0 : tensor<1x7x3xf32>
}""",
    "transpose_3d": """func.func @transpose_3d(%x: tensor<2x3x5xf32>) -> tensor<5x2x3xf32> {
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x5xf32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}""",
    "reverse_first": """func.func @reverse_first(%x: tensor<9x4xf32>) -> tensor<9x4xf32> {
  %0 = stablehlo.reverse %x, dims = [0] : tensor<9x4xf32>
  return %0 : tensor<9x4xf32>
}""",
    # --- reshape ----------------------------------------------------------------------
    "reshape_merge3": _reshape("reshape_merge3", "2x3x5", "30"),
    "reshape_split3": _reshape("reshape_split3", "60", "3x4x5"),
    "reshape_regroup": _reshape("reshape_regroup", "6x10", "4x15"),
    "reshape_regroup_units": _reshape("reshape_regroup_units", "1x6x1x10", "4x1x15x1"),
    "reshape_coprime": _reshape("reshape_coprime", "5x7", "7x5"),
    "reshape_long": _reshape("reshape_long", "8x9x10", "12x6x10"),
    "reshape_to_scalar": _reshape("reshape_to_scalar", "1", ""),
    "reshape_from_scalar": _reshape("reshape_from_scalar", "", "1x1"),
    "reshape_empty": _reshape("reshape_empty", "3x0", "0x5"),
    "reshape_powers": _reshape("reshape_powers", "16x4x2", "2x8x8"),
    # --- concatenate, slices, pad -------------------------------------------------------
    "concat_plain": """func.func @concat_plain(%x: tensor<3x4xf32>, %y: tensor<3x6xf32>) -> tensor<3x10xf32> {
  %0 = stablehlo.concatenate %x, %y, dim = 1 : (tensor<3x4xf32>, tensor<3x6xf32>) -> tensor<3x10xf32>
  return %0 : tensor<3x10xf32>
}""",
    "concat_of_slices": """func.func @concat_of_slices(%x: tensor<10x3xf32>, %y: tensor<10x3xf32>) -> tensor<6x3xf32> {
  %0 = stablehlo.slice %x [0:2, 0:3] : (tensor<10x3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.slice %y [6:10, 0:3] : (tensor<10x3xf32>) -> tensor<4x3xf32>
  %2 = stablehlo.concatenate %1, %0, dim = 0 : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  return %2 : tensor<6x3xf32>
}""",
    "concat_rotate": """func.func @concat_rotate(%x: tensor<10x3xf32>) -> tensor<14x3xf32> {
  %0 = stablehlo.slice %x [6:10, 0:3] : (tensor<10x3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.concatenate %0, %x, dim = 0 : (tensor<4x3xf32>, tensor<10x3xf32>) -> tensor<14x3xf32>
  return %1 : tensor<14x3xf32>
}""",
    "concat_slice_and_other": """func.func @concat_slice_and_other(%x: tensor<10x3xf32>, %y: tensor<10x3xf32>) -> tensor<14x3xf32> {
  %0 = stablehlo.slice %x [6:10, 0:3] : (tensor<10x3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.concatenate %0, %y, dim = 0 : (tensor<4x3xf32>, tensor<10x3xf32>) -> tensor<14x3xf32>
  return %1 : tensor<14x3xf32>
}""",
    "concat_same_tensor": """func.func @concat_same_tensor(%x: tensor<5x3xf32>) -> tensor<10x3xf32> {
  %0 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}""",
    "slice_strided": """func.func @slice_strided(%x: tensor<16x6x4xf32>) -> tensor<8x6x1xf32> {
  %0 = stablehlo.slice %x [0:16:2, 0:6, 3:4] : (tensor<16x6x4xf32>) -> tensor<8x6x1xf32>
  return %0 : tensor<8x6x1xf32>
}""",
    "dynamic_slice_1": """func.func @dynamic_slice_1(%x: tensor<12x5xf32>, %i: tensor<i32>) -> tensor<3x5xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, %i, sizes = [3, 5] : (tensor<12x5xf32>, tensor<i32>, tensor<i32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}""",
    "dus_dynamic": """func.func @dus_dynamic(%x: tensor<12x5xf32>, %u: tensor<2x5xf32>, %i: tensor<i32>) -> tensor<12x5xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %i : (tensor<12x5xf32>, tensor<2x5xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  return %0 : tensor<12x5xf32>
}""",
    "dus_constant": """func.func @dus_constant(%x: tensor<12x5xf32>, %u: tensor<2x1xf32>) -> tensor<12x5xf32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %x, %u, %c, %c : (tensor<12x5xf32>, tensor<2x1xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  return %0 : tensor<12x5xf32>
}""",
    "dus_constant_kinds": """func.func @dus_constant_kinds(%x: tensor<12x5xf32>, %u: tensor<2x5xf32>, %j: tensor<i32>) -> tensor<12x5xf32> {
  %c = "chlo.constant_like"(%j) {value = 1 : i32} : (tensor<i32>) -> tensor<i32>
  %0 = stablehlo.dynamic_update_slice %x, %u, %c, %c : (tensor<12x5xf32>, tensor<2x5xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  %d = chlo.constant dense<1> : tensor<i32>
  %1 = stablehlo.dynamic_update_slice %0, %u, %d, %d : (tensor<12x5xf32>, tensor<2x5xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  %e = arith.constant dense<1> : tensor<i32>
  %2 = stablehlo.dynamic_update_slice %1, %u, %e, %d : (tensor<12x5xf32>, tensor<2x5xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  %f = sdy.constant dense<1> : tensor<i32>
  %3 = stablehlo.dynamic_update_slice %2, %u, %f, %j : (tensor<12x5xf32>, tensor<2x5xf32>, tensor<i32>, tensor<i32>) -> tensor<12x5xf32>
  return %3 : tensor<12x5xf32>
}""",
    "pad_interior": """func.func @pad_interior(%x: tensor<4x6xf32>, %v: tensor<f32>) -> tensor<7x6xf32> {
  %0 = stablehlo.pad %x, %v, low = [0, 0], high = [0, 0], interior = [1, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<7x6xf32>
  return %0 : tensor<7x6xf32>
}""",
    # --- contractions -----------------------------------------------------------------
    "dot_mm": """func.func @dot_mm(%x: tensor<3x7xf32>, %y: tensor<7x5xf32>) -> tensor<3x5xf32> {
  %0 = stablehlo.dot %x, %y : (tensor<3x7xf32>, tensor<7x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}""",
    "dot_vm": """func.func @dot_vm(%x: tensor<7xf32>, %y: tensor<7x5xf32>) -> tensor<5xf32> {
  %0 = stablehlo.dot %x, %y : (tensor<7xf32>, tensor<7x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}""",
    "dot_mv": """func.func @dot_mv(%x: tensor<3x7xf32>, %y: tensor<7xf32>) -> tensor<3xf32> {
  %0 = stablehlo.dot %x, %y : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}""",
    "dot_vv": """func.func @dot_vv(%x: tensor<7xf32>) -> tensor<f32> {
  %0 = stablehlo.dot %x, %x : (tensor<7xf32>, tensor<7xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}""",
    "dot_general_batched": """func.func @dot_general_batched(%x: tensor<6x3x4x5xf32>, %y: tensor<5x6x7x4xf32>) -> tensor<6x3x7xf32> {
  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [1], contracting_dims = [2, 3] x [3, 0]
    : (tensor<6x3x4x5xf32>, tensor<5x6x7x4xf32>) -> tensor<6x3x7xf32>
  return %0 : tensor<6x3x7xf32>
}""",
    "dot_general_outer": """func.func @dot_general_outer(%x: tensor<3x2xf32>, %y: tensor<4xf32>) -> tensor<3x2x4xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [] x [] : (tensor<3x2xf32>, tensor<4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}""",
    "conv_nchw": _conv("conv_nchw", "4x6x20x20", "8x6x5x5", "4x8x16x16", "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"),
    "conv_big_kernel": _conv("conv_big_kernel", "2x10x3", "9x3x4", "2x2x4", "[b, 0, f]x[0, i, o]->[b, 0, f]"),
    "conv_strided_padded": _conv("conv_strided_padded", "3x32x32x4", "3x3x4x6", "3x16x16x6",
                                 "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
                                 "stride = [2, 2], pad = [[1, 0], [1, 0]]"),
    "conv_feature_groups": _conv("conv_feature_groups", "2x12x9", "4x6x3", "2x6x7",
                                 "[b, f, 0]x[i, o, 0]->[b, f, 0]", groups=(1, 3)),
    "conv_depthwise": _conv("conv_depthwise", "2x8x9", "1x8x3", "2x8x7",
                            "[b, f, 0]x[i, o, 0]->[b, f, 0]", groups=(1, 8)),
    "conv_batch_groups": _conv("conv_batch_groups", "6x4x9", "4x3x3", "2x3x7",
                               "[b, f, 0]x[i, o, 0]->[b, f, 0]", groups=(3, 1)),
    "conv_unit_window": _conv("conv_unit_window", "2x5x5x3", "1x1x3x7", "2x5x5x7",
                              "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"),
    # --- reductions and windows ------------------------------------------------------
    "reduce_middle": """func.func @reduce_middle(%x: tensor<4x9x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x9x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}""",
    "reduce_all": """func.func @reduce_all(%x: tensor<4x9xf32>, %z: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x9xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}""",
    "reduce_two": """func.func @reduce_two(%x: tensor<4x9xf32>, %y: tensor<4x9xi32>, %z: tensor<f32>, %w: tensor<i32>) -> tensor<9xf32> {
  %0:2 = stablehlo.reduce(%x init: %z), (%y init: %w) across dimensions = [0] : (tensor<4x9xf32>, tensor<4x9xi32>, tensor<f32>, tensor<i32>) -> (tensor<9xf32>, tensor<9xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
      %m = stablehlo.maximum %a, %b : tensor<f32>
      %n = stablehlo.maximum %c, %d : tensor<i32>
      stablehlo.return %m, %n : tensor<f32>, tensor<i32>
    }
  return %0#0 : tensor<9xf32>
}""",
    "reduce_window_pool": """func.func @reduce_window_pool(%x: tensor<2x12x12x3xf32>, %z: tensor<f32>) -> tensor<2x6x6x3xf32> {
  %0 = "stablehlo.reduce_window"(%x, %z) """ + MAX_BODY + """ {window_dimensions = array<i64: 1, 2, 2, 1>,
    window_strides = array<i64: 1, 2, 2, 1>} : (tensor<2x12x12x3xf32>, tensor<f32>) -> tensor<2x6x6x3xf32>
  return %0 : tensor<2x6x6x3xf32>
}""",
    "reduce_window_padded_unit": """func.func @reduce_window_padded_unit(%x: tensor<5x8xf32>, %z: tensor<f32>) -> tensor<7x8xf32> {
  %0 = "stablehlo.reduce_window"(%x, %z) """ + MAX_BODY + """ {window_dimensions = array<i64: 1, 1>,
    padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<5x8xf32>, tensor<f32>) -> tensor<7x8xf32>
  return %0 : tensor<7x8xf32>
}""",
    "select_and_scatter_pool": """func.func @select_and_scatter_pool(%x: tensor<4x8x6xf32>, %src: tensor<4x4x6xf32>, %z: tensor<f32>) -> tensor<4x8x6xf32> {
  %0 = "stablehlo.select_and_scatter"(%x, %src, %z) """ + GE_BODY[:-1] + ", " + SCATTER_ADD[1:] + """ {
    window_dimensions = array<i64: 1, 2, 1>, window_strides = array<i64: 1, 2, 1>
  } : (tensor<4x8x6xf32>, tensor<4x4x6xf32>, tensor<f32>) -> tensor<4x8x6xf32>
  return %0 : tensor<4x8x6xf32>
}""",
    "sort_rows": """func.func @sort_rows(%x: tensor<5x11xf32>, %y: tensor<5x11xi32>) -> tensor<5x11xf32> {
  %0:2 = "stablehlo.sort"(%x, %y) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<5x11xf32>, tensor<5x11xi32>) -> (tensor<5x11xf32>, tensor<5x11xi32>)
  return %0#0 : tensor<5x11xf32>
}""",
    "sort_only_dim": """func.func @sort_only_dim(%x: tensor<1x11xf32>) -> tensor<1x11xf32> {
  %0 = "stablehlo.sort"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<1x11xf32>) -> tensor<1x11xf32>
  return %0 : tensor<1x11xf32>
}""",
    # --- gather / scatter ---------------------------------------------------------------
    "gather_embedding": _gather("gather_embedding", "100x16xf32", "6x1xi32", "6x16xf32",
                                "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
                                "1, 16"),
    "gather_windows": _gather("gather_windows", "9x8x5xf32", "4x2xi32", "4x3x8x1xf32",
                              "offset_dims = [1, 2, 3], start_index_map = [0, 2], index_vector_dim = 1",
                              "3, 8, 1"),
    "gather_batched": _gather("gather_batched", "4x10x3xf32", "4x2x1xi32", "4x2x3xf32",
                              "offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], "
                              "start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2",
                              "1, 1, 3"),
    "gather_implicit_ivd": _gather("gather_implicit_ivd", "7x1x6xf32", "5xi32", "5x6xf32",
                                   "offset_dims = [1], collapsed_slice_dims = [0, 1], start_index_map = [0], index_vector_dim = 1",
                                   "1, 1, 6"),
    "scatter_add": _scatter("scatter_add", "50x8xf32", "10x1xi32", "10x8xf32",
                            "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"),
    "scatter_overwrite": _scatter("scatter_overwrite", "50x8xf32", "10x1xi32", "10x8xf32",
                                  "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1",
                                  SCATTER_OVERWRITE),
    "scatter_windowed": _scatter("scatter_windowed", "6x8xf32", "3x1xi32", "3x2x8xf32",
                                 "update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"),
    "scatter_batched": _scatter("scatter_batched", "3x20x4xf32", "3x5x1xi32", "3x5x4xf32",
                                "update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], "
                                "scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2"),
    "scatter_pred_or": """func.func @scatter_pred_or(%x: tensor<9xi1>, %i: tensor<4x1xi32>, %u: tensor<4xi1>) -> tensor<9xi1> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
    ^bb0(%a: tensor<i1>, %b: tensor<i1>):
      %s = stablehlo.or %a, %b : tensor<i1>
      stablehlo.return %s : tensor<i1>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<9xi1>, tensor<4x1xi32>, tensor<4xi1>) -> tensor<9xi1>
  return %0 : tensor<9xi1>
}""",
    "scatter_int_and": """func.func @scatter_int_and(%x: tensor<9xi32>, %i: tensor<4x1xi32>, %u: tensor<4xi32>) -> tensor<9xi32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.and %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<9xi32>, tensor<4x1xi32>, tensor<4xi32>) -> tensor<9xi32>
  return %0 : tensor<9xi32>
}""",
    "scatter_two_inputs_mixed": """func.func @scatter_two_inputs_mixed(%x: tensor<9xf32>, %i: tensor<4x1xi32>, %u: tensor<4xf32>) -> tensor<9xf32> {
  %0:2 = "stablehlo.scatter"(%x, %x, %i, %u, %u) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %s = stablehlo.add %a, %c : tensor<f32>
      %m = stablehlo.multiply %b, %d : tensor<f32>
      stablehlo.return %s, %m : tensor<f32>, tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<9xf32>, tensor<9xf32>, tensor<4x1xi32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<9xf32>, tensor<9xf32>)
  return %0#0 : tensor<9xf32>
}""",
    "scatter_two_inputs_add": """func.func @scatter_two_inputs_add(%x: tensor<9xf32>, %i: tensor<4x1xi32>, %u: tensor<4xf32>) -> tensor<9xf32> {
  %0:2 = "stablehlo.scatter"(%x, %x, %i, %u, %u) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %s = stablehlo.add %a, %c : tensor<f32>
      %m = stablehlo.add %d, %b : tensor<f32>
      stablehlo.return %s, %m : tensor<f32>, tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
    : (tensor<9xf32>, tensor<9xf32>, tensor<4x1xi32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<9xf32>, tensor<9xf32>)
  return %0#0 : tensor<9xf32>
}""",
    # --- linear algebra, fft, rng -------------------------------------------------------
    "cholesky_batched": """func.func @cholesky_batched(%x: tensor<3x2x6x6xf32>) -> tensor<3x2x6x6xf32> {
  %0 = stablehlo.cholesky %x, lower = true : tensor<3x2x6x6xf32>
  return %0 : tensor<3x2x6x6xf32>
}""",
    "triangular_left_adjoint": """func.func @triangular_left_adjoint(%a: tensor<2x4x4xf32>, %b: tensor<2x4x7xf32>) -> tensor<2x4x7xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x4x4xf32>, tensor<2x4x7xf32>) -> tensor<2x4x7xf32>
  return %0 : tensor<2x4x7xf32>
}""",
    "triangular_right_plain": """func.func @triangular_right_plain(%a: tensor<4x4xf32>, %b: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = false, unit_diagonal = true,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}""",
    "fft_complex_2d": """func.func @fft_complex_2d(%x: tensor<3x8x16xcomplex<f32>>) -> tensor<3x8x16xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = FFT, length = [8, 16] : (tensor<3x8x16xcomplex<f32>>) -> tensor<3x8x16xcomplex<f32>>
  return %0 : tensor<3x8x16xcomplex<f32>>
}""",
    "fft_real": """func.func @fft_real(%x: tensor<5x16xf32>) -> tensor<5x9xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [16] : (tensor<5x16xf32>) -> tensor<5x9xcomplex<f32>>
  return %0 : tensor<5x9xcomplex<f32>>
}""",
    "rng_bits": """func.func @rng_bits(%s: tensor<3xui64>) -> tensor<6x5xui32> {
  %0, %1 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<3xui64>) -> (tensor<3xui64>, tensor<6x5xui32>)
  return %1 : tensor<6x5xui32>
}""",
    # --- custom calls -----------------------------------------------------------------
    "cc_move_to_host": _custom("cc_move_to_host", "MoveToHost", ["6x3xf32"], ["6x3xf32"]),
    "cc_annotate": _custom("cc_annotate", "annotate_device_placement", ["6x3xf32"], ["6x3xf32"]),
    "cc_cholesky": _custom("cc_cholesky", "Cholesky", ["2x5x5xf32"], ["2x5x5xf32"]),
    "cc_invert_lower": _custom("cc_invert_lower", "InvertDiagBlocksLowerTriangular", ["4x4xf32"], ["4x4xf32"]),
    "cc_spmd_rotate": _custom("cc_spmd_rotate", "_SPMDInternalOp_RotateRight", ["8x2xf32"], ["8x2xf32"]),
    "cc_eigh": _custom("cc_eigh", "Eigh", ["3x6x6xf32"], ["3x6x6xf32", "3x6xf32"]),
    "cc_qr": _custom("cc_qr", "Qr", ["2x7x4xf32"], ["2x7x4xf32", "2x4xf32"]),
    "cc_householder": _custom("cc_householder", "ProductOfElementaryHouseholderReflectors",
                              ["2x7x4xf32", "2x4xf32"], ["2x7x4xf32"]),
    "cc_topk": _custom("cc_topk", "mhlo.topk", ["3x20xf32"], ["3x4xf32", "3x4xi32"]),
    "cc_approx_topk": _custom("cc_approx_topk", "ApproxTopK", ["5x32xf32", "5x32xi32", "f32", "i32"],
                              ["5x8xf32", "5x8xi32"]),
    "cc_x64_combine": _custom("cc_x64_combine", "X64Combine", ["4x3xui32", "4x3xui32"], ["4x3xui64"]),
    "cc_python_callback": _custom("cc_python_callback", "xla_ffi_python_cpu_callback", ["4xf32"], ["4xf32"]),
    "cc_unknown": _custom("cc_unknown", "my_kernel", ["4xf32"], ["4xf32"]),
    "cc_user_rule": """func.func @cc_user_rule(%x: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.custom_call @my_kernel(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([j, i]) {i=6, j=4} need_replication={j}, custom>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}""",
    # --- ops without rules ----------------------------------------------------------------
    "no_rule_ops": """func.func @no_rule_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<4xf32>
  %1 = stablehlo.constant dense<1.0> : tensor<4xf32>
  %2 = stablehlo.optimization_barrier %0 : tensor<4xf32>
  %3 = stablehlo.partition_id : tensor<ui32>
  %4 = stablehlo.after_all : !stablehlo.token
  %5 = call @callee(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %6:2 = stablehlo.while(%it = %1, %acc = %5) : tensor<4xf32>, tensor<4xf32>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.add %it, %acc : tensor<4xf32>
      stablehlo.return %n, %acc : tensor<4xf32>, tensor<4xf32>
    }
  return %6#0 : tensor<4xf32>
}
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}""",
    "unknown_stablehlo_op": """func.func @unknown_stablehlo_op(%x: tensor<2x6x3xf32>, %s: tensor<6xf32>) -> tensor<2x6x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x6x3xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x3xf32>, tensor<6xf32>, tensor<6xf32>)
  return %0#0 : tensor<2x6x3xf32>
}""",
}
