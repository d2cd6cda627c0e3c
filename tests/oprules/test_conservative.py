"""conservative-propagation: which rules change, and how.

Conservative mode only changes rule building for ops whose sharded dimension
would need data from neighbours: concatenate (no factor on the concatenated
dimension), convolution (no spatial factors), and pad / slice / reduce_window
/ select_and_scatter (their permutation and windowed factors block). Every
other rule is the same in both modes (reshape included: sub-axes are a matter
of factor propagation, not of rules).
"""
import pytest

from oprules_cases import CASES
from oprules_helpers import rule_str, rule_text

CONSERVATIVE = {
    "concat_plain": ("stablehlo.concatenate", "([i, j], [i, k])->([i, l]) {i=3, j=1, k=1, l=1}"),
    "concat_of_slices": ("stablehlo.concatenate", "([j, i], [k, i])->([l, i]) {i=3, j=1, k=1, l=1}"),
    "conv_strided_padded": ("stablehlo.convolution",
                            "([i, l, m, j], [n, o, j, k])->([i, p, q, k]) "
                            "{i=3, j=4, k=6, l=1, m=1, n=1, o=1, p=1, q=1} reduction={j}"),
    "conv_feature_groups": ("stablehlo.convolution",
                            "([i, jk, m], [k, jl, n])->([i, jl, o]) {i=2, j=3, k=4, l=2, m=1, n=1, o=1} "
                            "reduction={k}"),
    "slice_strided": ("stablehlo.slice",
                      "([i, j, k])->([i, j, k]) {i=16, j=6, k=4} permutation={i, k} blocked_propagation={i, k}"),
    "pad_interior": ("stablehlo.pad",
                     "([i, j], [])->([i, j]) {i=4, j=6} permutation={i} blocked_propagation={i}"),
    "reduce_window_pool": ("stablehlo.reduce_window",
                           "([i, j, k, l], [])->([i, j, k, l]) {i=2, j=6, k=6, l=3} "
                           "permutation={j, k} blocked_propagation={j, k}"),
    "select_and_scatter_pool": ("stablehlo.select_and_scatter",
                                "([i, k, l], [i, j, l], [])->([i, k, l]) {i=4, j=4, k=8, l=6} "
                                "need_replication={j} permutation={k} blocked_propagation={j, k}"),
}

SAME_IN_BOTH_MODES = {
    "reshape_regroup": "stablehlo.reshape",
    "reshape_long": "stablehlo.reshape",
    "dynamic_slice_1": "stablehlo.dynamic_slice",
    "dus_dynamic": "stablehlo.dynamic_update_slice",
    "dot_general_batched": "stablehlo.dot_general",
    "gather_windows": "stablehlo.gather",
    "reduce_middle": "stablehlo.reduce",
    "sort_rows": "stablehlo.sort",
    "reverse_first": "stablehlo.reverse",
    "broadcast_mixed": "stablehlo.broadcast_in_dim",
    "cc_topk": "stablehlo.custom_call",
}


@pytest.mark.parametrize("case", sorted(CONSERVATIVE))
def test_conservative_rule(case):
    op_name, body = CONSERVATIVE[case]
    conservative = rule_text(CASES[case], op_name, conservative=True)
    assert conservative == rule_str(body)
    assert rule_text(CASES[case], op_name) != conservative


@pytest.mark.parametrize("case", sorted(SAME_IN_BOTH_MODES))
def test_rule_independent_of_mode(case):
    op_name = SAME_IN_BOTH_MODES[case]
    rule = rule_text(CASES[case], op_name)
    assert rule is not None
    assert rule_text(CASES[case], op_name, conservative=True) == rule


def test_window_without_halo_stays_unblocked():
    # window 1, stride 1 along dimension 1, padding only along dimension 0
    rule = rule_text(CASES["reduce_window_padded_unit"], "stablehlo.reduce_window", conservative=True)
    assert rule == rule_str("([i, j], [])->([i, j]) {i=7, j=8} permutation={i} blocked_propagation={i}")
