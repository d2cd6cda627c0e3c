"""The registry's rules, one op family at a time, against rules worked out by hand."""
import pytest

from oprules_cases import CASES
from oprules_helpers import rule_str, rule_text
from sdylog.ir import parse_module
from sdylog.ir.walk import walk_ops
from sdylog.oprules import rule_for_op
from sdylog.oprules.registry import RULES, may_have_permutation_factors

# case name -> (op of interest, expected rule body); the cases are in oprules_cases.py.
EXPECTED = {
    # element-wise: dimension d of every tensor is factor d; scalars take none
    "add_3d": ("stablehlo.add", "([i, j, k], [i, j, k])->([i, j, k]) {i=6, j=1, k=10}"),
    "tanh_scalar": ("stablehlo.tanh", "([])->([])"),
    "multiply_zero_dim": ("stablehlo.multiply", "([i, j], [i, j])->([i, j]) {i=0, j=3}"),
    "select_scalar_pred": ("stablehlo.select", "([], [i, j], [i, j])->([i, j]) {i=3, j=9}"),
    "clamp_mixed": ("stablehlo.clamp", "([], [i, j], [i, j])->([i, j]) {i=6, j=2}"),
    "sharding_constraint": ("sdy.sharding_constraint", "([i, j])->([i, j]) {i=8, j=6}"),
    # the extra innermost dimension of the narrow side needs replication
    "bitcast_to_narrow": ("stablehlo.bitcast_convert",
                          "([i, j])->([i, j, k]) {i=6, j=10, k=2} need_replication={k}"),
    "bitcast_to_wide": ("stablehlo.bitcast_convert", "([i, j])->([i]) {i=3, j=4} need_replication={j}"),
    "batch_norm_inference_f0": ("stablehlo.batch_norm_inference",
                                "([i, j, k], [i], [i], [i], [i])->([i, j, k]) {i=12, j=5, k=7}"),
    # collectives: the resized dimension has one factor per side
    "all_gather_dim0": ("stablehlo.all_gather",
                        "([j, i])->([k, i]) {i=5, j=3, k=12} need_replication={j, k}"),
    "all_to_all_two_dims": ("stablehlo.all_to_all",
                            "([l, j, i])->([m, k, i]) {i=3, j=8, k=4, l=6, m=12} need_replication={j, k, l, m}"),
    "reduce_scatter_last": ("stablehlo.reduce_scatter",
                            "([i, j, k])->([i, j, l]) {i=5, j=1, k=16, l=4} need_replication={k, l}"),
    "all_reduce_two_operands": ("stablehlo.all_reduce", "([i, j], [i, j])->([i, j], [i, j]) {i=6, j=4}"),
    # broadcast: expanded size-1 dimensions keep a size-1 factor of their own
    "broadcast_mixed": ("stablehlo.broadcast_in_dim",
                        "([i, k, m])->([j, k, l, m]) {i=1, j=4, k=6, l=5, m=3}"),
    "broadcast_unit_kept": ("stablehlo.broadcast_in_dim", "([j, i])->([i, j, k]) {i=1, j=7, k=3}"),
    "transpose_3d": ("stablehlo.transpose", "([j, k, i])->([i, j, k]) {i=5, j=2, k=3}"),
    "reverse_first": ("stablehlo.reverse", "([i, j])->([i, j]) {i=9, j=4} permutation={i}"),
    # reshape: merged / split dimensions map to several factors
    "reshape_merge3": ("stablehlo.reshape", "([i, j, k])->([ijk]) {i=2, j=3, k=5}"),
    "reshape_split3": ("stablehlo.reshape", "([ijk])->([i, j, k]) {i=3, j=4, k=5}"),
    "reshape_regroup": ("stablehlo.reshape", "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=5}"),
    "reshape_coprime": ("stablehlo.reshape", "([i, k])->([j, l]) {i=5, j=7, k=7, l=5}"),
    "reshape_long": ("stablehlo.reshape",
                     "([ij, ln, o])->([ik, mn, o]) {i=4, j=2, k=3, l=3, m=2, n=3, o=10}"),
    "reshape_powers": ("stablehlo.reshape", "([ij, k, l])->([i, j, kl]) {i=2, j=8, k=4, l=2}"),
    "reshape_to_scalar": ("stablehlo.reshape", "([i])->([]) {i=1}"),
    "reshape_from_scalar": ("stablehlo.reshape", "([])->([i, j]) {i=1, j=1}"),
    "reshape_regroup_units": ("stablehlo.reshape",
                              "([i, jk, m, pq])->([jl, n, oq, r]) {i=1, j=2, k=3, l=2, m=1, n=1, o=3, p=2, q=5, r=1}"),
    # concatenate: permutation when the operands are slices (of one tensor)
    "concat_plain": ("stablehlo.concatenate", "([i, j], [i, j])->([i, j]) {i=3, j=10} need_replication={j}"),
    "concat_of_slices": ("stablehlo.concatenate", "([i, j], [i, j])->([i, j]) {i=6, j=3} permutation={i}"),
    "concat_rotate": ("stablehlo.concatenate", "([i, j], [i, j])->([i, j]) {i=14, j=3} permutation={i}"),
    "concat_slice_and_other": ("stablehlo.concatenate",
                               "([i, j], [i, j])->([i, j]) {i=14, j=3} need_replication={i}"),
    "concat_same_tensor": ("stablehlo.concatenate",
                           "([i, j], [i, j])->([i, j]) {i=10, j=3} need_replication={i}"),
    # static vs dynamic slicing
    "slice_strided": ("stablehlo.slice", "([i, j, k])->([i, j, k]) {i=16, j=6, k=4} permutation={i, k}"),
    "pad_interior": ("stablehlo.pad", "([i, j], [])->([i, j]) {i=4, j=6} permutation={i}"),
    "dynamic_slice_1": ("stablehlo.dynamic_slice",
                        "([i, j], [], [])->([i, j]) {i=12, j=5} need_replication={i} blocked_propagation={i}"),
    "dus_dynamic": ("stablehlo.dynamic_update_slice",
                    "([i, k], [j, k], [], [])->([i, k]) {i=12, j=2, k=5} need_replication={j}"),
    "dus_constant": ("stablehlo.dynamic_update_slice",
                     "([i, k], [j, l], [], [])->([i, k]) {i=12, j=2, k=5, l=1}"),
    # contractions
    "dot_mm": ("stablehlo.dot", "([i, k], [k, j])->([i, j]) {i=3, j=5, k=7} reduction={k}"),
    "dot_vm": ("stablehlo.dot", "([j], [j, i])->([i]) {i=5, j=7} reduction={j}"),
    "dot_vv": ("stablehlo.dot", "([i], [i])->([]) {i=7} reduction={i}"),
    "dot_general_batched": ("stablehlo.dot_general",
                            "([i, j, l, m], [m, i, k, l])->([i, j, k]) {i=6, j=3, k=7, l=4, m=5} reduction={l, m}"),
    "dot_general_outer": ("stablehlo.dot_general", "([i, j], [k])->([i, j, k]) {i=3, j=2, k=4}"),
    "conv_strided_padded": ("stablehlo.convolution",
                            "([i, jk, lm, n], [k, m, n, o])->([i, j, l, o]) "
                            "{i=3, j=16, k=2, l=16, m=2, n=4, o=6} reduction={k, m, n} permutation={j, l}"),
    "conv_big_kernel": ("stablehlo.convolution",
                        "([i, j, k], [j, k, l])->([i, m, l]) {i=2, j=9, k=3, l=4, m=1} reduction={j, k}"),
    "conv_feature_groups": ("stablehlo.convolution",
                            "([i, kl, j], [l, km, n])->([i, km, j]) {i=2, j=7, k=3, l=4, m=2, n=1} "
                            "reduction={l} permutation={j}"),
    "conv_batch_groups": ("stablehlo.convolution",
                          "([ij, l, k], [l, i, m])->([j, i, k]) {i=3, j=2, k=7, l=4, m=1} "
                          "reduction={l} permutation={k}"),
    # reductions and windows
    "reduce_middle": ("stablehlo.reduce", "([i, j, k], [])->([i, k]) {i=4, j=9, k=2} reduction={j}"),
    "reduce_two": ("stablehlo.reduce",
                   "([i, j], [i, j], [], [])->([j], [j]) {i=4, j=9} reduction={i}"),
    "reduce_window_pool": ("stablehlo.reduce_window",
                           "([i, j, k, l], [])->([i, j, k, l]) {i=2, j=6, k=6, l=3} permutation={j, k}"),
    "reduce_window_padded_unit": ("stablehlo.reduce_window",
                                  "([i, j], [])->([i, j]) {i=7, j=8} permutation={i}"),
    "select_and_scatter_pool": ("stablehlo.select_and_scatter",
                                "([i, k, l], [i, j, l], [])->([i, k, l]) {i=4, j=4, k=8, l=6} "
                                "need_replication={j} permutation={k}"),
    "sort_rows": ("stablehlo.sort", "([i, j], [i, j])->([i, j], [i, j]) {i=5, j=11} need_replication={j}"),
    "sort_only_dim": ("stablehlo.sort",
                      "([i, j])->([i, j]) {i=1, j=11} need_replication={j} blocked_propagation={j}"),
    # gather / scatter
    "gather_embedding": ("stablehlo.gather",
                         "([k, j], [i, l])->([i, j]) {i=6, j=16, k=100, l=1} reduction={k} need_replication={l}"),
    "gather_windows": ("stablehlo.gather",
                       "([j, k, l], [i, n])->([i, j, k, m]) {i=4, j=9, k=8, l=5, m=1, n=2} "
                       "reduction={l} need_replication={j, m, n} blocked_propagation={j}"),
    "gather_batched": ("stablehlo.gather",
                       "([i, l, k], [i, j, m])->([i, j, k]) {i=4, j=2, k=3, l=10, m=1} "
                       "reduction={l} need_replication={m}"),
    "scatter_add": ("stablehlo.scatter",
                    "([k, j], [i, l], [i, j])->([k, j]) {i=10, j=8, k=50, l=1} reduction={i} need_replication={l}"),
    "scatter_overwrite": ("stablehlo.scatter",
                          "([k, j], [i, l], [i, j])->([k, j]) {i=10, j=8, k=50, l=1} need_replication={i, l}"),
    "scatter_windowed": ("stablehlo.scatter",
                         "([j, l], [i, m], [i, k, l])->([j, l]) {i=3, j=6, k=2, l=8, m=1} "
                         "reduction={i} need_replication={j, k, m}"),
    "scatter_pred_or": ("stablehlo.scatter",
                        "([j], [i, k], [i])->([j]) {i=4, j=9, k=1} reduction={i} need_replication={k}"),
    "scatter_int_and": ("stablehlo.scatter",
                        "([j], [i, k], [i])->([j]) {i=4, j=9, k=1} need_replication={i, k}"),
    "scatter_two_inputs_mixed": ("stablehlo.scatter",
                                 "([j], [j], [i, k], [i], [i])->([j], [j]) {i=4, j=9, k=1} need_replication={i, k}"),
    "scatter_two_inputs_add": ("stablehlo.scatter",
                               "([j], [j], [i, k], [i], [i])->([j], [j]) {i=4, j=9, k=1} "
                               "reduction={i} need_replication={k}"),
    # linear algebra, fft, rng
    "cholesky_batched": ("stablehlo.cholesky",
                         "([i, j, k, l])->([i, j, k, l]) {i=3, j=2, k=6, l=6} need_replication={k, l}"),
    "triangular_left_adjoint": ("stablehlo.triangular_solve",
                                "([i, l, j], [i, j, k])->([i, l, k]) {i=2, j=4, k=7, l=4} need_replication={j, k, l}"),
    "triangular_right_plain": ("stablehlo.triangular_solve",
                               "([k, j], [i, j])->([i, k]) {i=6, j=4, k=4} need_replication={i, j, k}"),
    "fft_complex_2d": ("stablehlo.fft", "([i, j, k])->([i, j, k]) {i=3, j=8, k=16} need_replication={j, k}"),
    "fft_real": ("stablehlo.fft", "([i, j])->([i, j]) {i=5, j=16} need_replication={j} blocked_propagation={j}"),
    "rng_bits": ("stablehlo.rng_bit_generator",
                 "([i])->([i], [j, k]) {i=3, j=6, k=5} need_replication={i} blocked_propagation={i}"),
    # custom calls
    "cc_move_to_host": ("stablehlo.custom_call", "([i, j])->([i, j]) {i=6, j=3}"),
    "cc_spmd_rotate": ("stablehlo.custom_call", "([i, j])->([i, j]) {i=8, j=2}"),
    "cc_eigh": ("stablehlo.custom_call", "([i, j, k])->([i, j, k], [i, k]) {i=3, j=6, k=6}"),
    "cc_qr": ("stablehlo.custom_call",
              "([i, j, k])->([i, j, k], [i, l]) {i=2, j=7, k=4, l=4} need_replication={j, k, l}"),
    "cc_householder": ("stablehlo.custom_call",
                       "([i, j, k], [i, l])->([i, j, k]) {i=2, j=7, k=4, l=4} need_replication={j, k, l}"),
    "cc_topk": ("stablehlo.custom_call",
                "([i, j])->([i, j], [i, j]) {i=3, j=20} need_replication={j} blocked_propagation={j}"),
    "cc_approx_topk": ("stablehlo.custom_call",
                       "([i, j], [i, j], [], [])->([i, k], [i, k]) {i=5, j=32, k=8} "
                       "need_replication={k} blocked_propagation={k}"),
    "cc_x64_combine": ("stablehlo.custom_call", "([i, j], [i, j])->([i, j]) {i=4, j=3}"),
    "cc_user_rule": ("stablehlo.custom_call", "([i, j])->([j, i]) {i=6, j=4} need_replication={j}, custom"),
}

# case name -> op that has no rule there
NO_RULE = {
    "reshape_empty": "stablehlo.reshape",
    "cc_python_callback": "stablehlo.custom_call",
    "cc_unknown": "stablehlo.custom_call",
    "unknown_stablehlo_op": "stablehlo.batch_norm_training",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_rule(case):
    op_name, body = EXPECTED[case]
    assert rule_text(CASES[case], op_name) == rule_str(body)


@pytest.mark.parametrize("case", sorted(NO_RULE))
def test_no_rule(case):
    assert rule_text(CASES[case], NO_RULE[case]) is None


@pytest.mark.parametrize("op_name", ["stablehlo.iota", "stablehlo.constant", "stablehlo.while",
                                     "stablehlo.optimization_barrier", "stablehlo.partition_id",
                                     "stablehlo.after_all", "func.call", "func.func", "func.return",
                                     "stablehlo.return"])
def test_ops_without_rules(op_name):
    assert rule_text(CASES["no_rule_ops"], op_name) is None


def test_ops_inside_regions_get_rules():
    # the add in the while body, and the scalar add of a reduction body
    assert rule_text(CASES["no_rule_ops"], "stablehlo.add") == rule_str("([i], [i])->([i]) {i=4}")
    assert rule_text(CASES["scatter_add"], "stablehlo.add") == rule_str("([], [])->([])")


def test_x64_combine_feeding_rng_state_is_replicated_and_blocked():
    text = """func.func @f(%a: tensor<2xui32>) -> tensor<3x4xui32> {
  %0 = stablehlo.custom_call @X64Combine(%a, %a) : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>
  %s, %bits = stablehlo.rng_bit_generator %0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
  return %bits : tensor<3x4xui32>
}"""
    assert rule_text(text, "stablehlo.custom_call") == rule_str(
        "([i], [i])->([i]) {i=2} need_replication={i} blocked_propagation={i}")


def test_user_rule_wins_over_the_registry():
    text = """func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.add %x, %x {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=4, j=6} need_replication={j}>} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}"""
    assert rule_text(text, "stablehlo.add") == rule_str("([i, j], [i, j])->([i, j]) {i=4, j=6} need_replication={j}")


def test_table_covers_the_op_families():
    for name in ["stablehlo.cbrt", "stablehlo.all_to_all", "stablehlo.collective_permute",
                 "stablehlo.cross-replica-sum", "stablehlo.batch_norm_inference",
                 "stablehlo.triangular_solve", "stablehlo.select_and_scatter", "stablehlo.iota"]:
        assert name in RULES


@pytest.mark.parametrize("case", sorted(CASES))
def test_ops_with_permutation_factors_are_named_as_such(case):
    # (-sdy-resolve-permutation-factors gives its rules only the ops named so)
    module = parse_module(CASES[case])
    with module.context:
        for op in walk_ops(module.operation):
            rule = rule_for_op(op)
            if rule is not None and rule.permutation and not rule.is_custom:
                assert may_have_permutation_factors(op.name), op.name


def test_ops_named_with_permutation_factors():
    assert may_have_permutation_factors("stablehlo.pad") and may_have_permutation_factors("stablehlo.convolution")
    assert not may_have_permutation_factors("stablehlo.add") and not may_have_permutation_factors("stablehlo.reshape")
