"""RuleBuilder's conventions (those of Shardy's rule builder)."""
import pytest

from sdylog.model.rule import NULL_DIM, FactorKind, RuleBuilder


def test_unmapped_dimensions_get_size_one_factors_operands_first():
    b = RuleBuilder([2, 1], [2])
    b.add_factor([0, NULL_DIM], [0], 8)
    rule = b.build()
    # operand 0 dim 1, operand 1 dim 0, result dim 1: new factors 1, 2, 3 in that order
    assert rule.factor_sizes == (8, 1, 1, 1)
    assert rule.operands == (((0,), (1,)), ((2,),))
    assert rule.results == (((0,), (3,)),)


def test_build_leaves_the_builder_unchanged():
    b = RuleBuilder([1], [1])
    first = b.build()
    assert b.build() == first
    assert b.factor_sizes == []


def test_size_one_factor_is_not_appended_to_a_mapped_dimension():
    b = RuleBuilder([1], [1])
    b.add_factor([0], [NULL_DIM], 4)
    b.add_factor([0], [0], 1)  # operand dim already has a factor: skipped there
    rule = b.build()
    assert rule.operands == (((0,),),)
    assert rule.results == (((1,),),)
    assert rule.factor_sizes == (4, 1)


def test_factor_to_dim_skips_scalars():
    b = RuleBuilder([2, 0, 2], [2])
    b.add_factor_to_dim(1, 5, FactorKind.REDUCTION)
    b.add_factor_to_dim(0, 3, operands=False)
    rule = b.build()
    assert rule.operands[1] == ()
    assert rule.operands[0][1] == (0,) and rule.operands[2][1] == (0,)
    assert rule.results[0] == ((1,), (0,))
    assert rule.reduction == (0,)


def test_kinds_and_blocking_are_independent():
    b = RuleBuilder([3], [3])
    b.add_pointwise([2, 4, 6], kind=lambda d: [FactorKind.PASS_THROUGH, FactorKind.PERMUTATION,
                                               FactorKind.NEED_REPLICATION][d],
                    blocked=lambda k: k is not FactorKind.PASS_THROUGH)
    rule = b.build()
    assert rule.permutation == (1,) and rule.need_replication == (2,)
    assert rule.blocked == (1, 2)
    assert rule.is_blocked(1) and not rule.is_blocked(0)


def test_blocked_pass_through():
    b = RuleBuilder([1], [1])
    b.add_factor([0], [0], 4, blocked=True)
    rule = b.build()
    assert rule.blocked == (0,) and rule.kind(0) is FactorKind.PASS_THROUGH
    assert not (rule.reduction or rule.need_replication or rule.permutation)


def test_pointwise_with_mismatch():
    b = RuleBuilder([2], [2]).add_pointwise_with_mismatch([8, 5], [4, 5], FactorKind.PERMUTATION, True)
    rule = b.build()
    assert rule.factor_sizes == (8, 5)
    assert rule.permutation == (0,) and rule.blocked == (0,)


def test_identity_maps_dimension_d_to_factor_d_whatever_the_rank():
    rule = RuleBuilder([2, 1], [2]).add_identity([6, 4]).build()
    assert rule.operands == (((0,), (1,)), ((0,),))
    assert rule.factor_sizes == (6, 4)
    with pytest.raises(ValueError):
        RuleBuilder([1], [1]).add_identity([2]).add_identity([2])


def test_wrong_number_of_dims_is_rejected():
    with pytest.raises(ValueError):
        RuleBuilder([1, 1], [1]).add_factor([0], [0], 2)


def test_rule_prints_as_shardy_does(mlir_ctx):
    b = RuleBuilder([2, 2], [2])
    b.add_factor([0, NULL_DIM], [0], 8)
    b.add_factor([NULL_DIM, 1], [1], 16)
    b.add_factor([1, 0], [NULL_DIM], 4, FactorKind.REDUCTION)
    assert str(b.build().to_attr()) == \
        "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=4} reduction={k}>"
