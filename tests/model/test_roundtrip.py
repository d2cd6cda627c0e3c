"""Sharding model <-> MLIR attributes: exact round trips."""
import pytest
from jaxlib.mlir import ir

from sdylog.ir.context import make_context
from sdylog.model import AxisRef, DimSharding, Mesh, OpShardingRule, SubAxis, TensorSharding
from sdylog.model.rule import FactorKind, RuleBuilder
from sdylog.model.sharding import sharding_per_value, sharding_per_value_attr

SHARDINGS = [
    '#sdy.sharding<@mesh, []>',
    '#sdy.sharding<@mesh, [{"x"}, {}]>',
    '#sdy.sharding<@mesh, [{"x", "y"}, {?}]>',
    '#sdy.sharding<@mesh, [{"x":(2)2, "y"}p1, {"z", ?}p0], replicated={"w"}>',
    '#sdy.sharding<@mesh, [{}, {}], replicated={"x":(1)2}, unreduced={"y"}>',
    '#sdy.sharding<mesh<["a"=2, "b"=4]>, [{"b":(1)2}, {"a"}]>',
    '#sdy.sharding<mesh<[], device_ids=[3]>, []>',
    '#sdy.sharding<mesh<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>, [{"a"}, {?}]>',
]


@pytest.mark.parametrize("text", SHARDINGS)
def test_tensor_sharding_round_trip(mlir_ctx, text):
    attr = ir.Attribute.parse(text)
    model = TensorSharding.from_attr(attr)
    assert str(model.to_attr()) == str(attr)
    assert TensorSharding.from_attr(model.to_attr()) == model


@pytest.mark.parametrize("text", SHARDINGS)
def test_kept_conversions_are_the_plain_ones(mlir_ctx, text):
    # (from_attr / to_attr keep what they converted: the same as read_attr /
    # make_attr, each attribute in the context asked for)
    attr = ir.Attribute.parse(text)
    model = TensorSharding.from_attr(attr)
    assert model == TensorSharding.read_attr(attr) and TensorSharding.from_attr(attr) is model
    assert model.to_attr() == model.make_attr() == attr
    other = make_context()
    with other:
        again = model.to_attr()
        assert again.context is other and again == ir.Attribute.parse(text) and again != attr
        assert TensorSharding.from_attr(again) == model


def test_tensor_sharding_fields(mlir_ctx):
    s = TensorSharding.from_attr(ir.Attribute.parse(SHARDINGS[3]))
    assert s.mesh == "mesh"
    assert s.dims[0] == DimSharding((AxisRef("x", SubAxis(2, 2)), AxisRef("y")), True, 1)
    assert s.dims[1] == DimSharding((AxisRef("z"),), False, 0)
    assert s.replicated == (AxisRef("w"),)
    assert [str(d) for d in s.dims] == ['{"x":(2)2, "y"}p1', '{"z", ?}p0']


def test_inlined_and_maximal_meshes(mlir_ctx):
    s = TensorSharding.from_attr(ir.Attribute.parse(SHARDINGS[6]))
    assert s.mesh == Mesh((), (3,)) and s.mesh.is_maximal
    s = TensorSharding.from_attr(ir.Attribute.parse(SHARDINGS[7]))
    assert s.mesh.devices() == (3, 2, 1, 0) and s.mesh.num_devices == 4
    assert Mesh.from_attr(ir.Attribute.parse('#sdy.mesh<["a"=2, "b"=4]>')).devices() == tuple(range(8))


def test_per_value_round_trip(mlir_ctx):
    text = '#sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}, {"y", ?}]>]>'
    attr = ir.Attribute.parse(text)
    assert str(sharding_per_value_attr(sharding_per_value(attr))) == str(attr)


RULES = [
    '#sdy.op_sharding_rule<([i, j, k], [i, j, k])->([i, j, k]) {i=2, j=1, k=4}>',
    '#sdy.op_sharding_rule<([], [])->([])>',
    '#sdy.op_sharding_rule<([i, j], [i, j])->([i, k], [i, k]) {i=2, j=2, k=4} need_replication={j, k}>',
    '#sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=8}>',
    '#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=4} reduction={k}>',
    '#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} permutation={j} blocked_propagation={i}, custom>',
]


@pytest.mark.parametrize("text", RULES)
def test_rule_round_trip(mlir_ctx, text):
    attr = ir.Attribute.parse(text)
    rule = OpShardingRule.from_attr(attr)
    assert str(rule.to_attr()) == str(attr)


def test_rule_fields_and_builder(mlir_ctx):
    rule = OpShardingRule.from_attr(ir.Attribute.parse(RULES[3]))
    assert rule.operands == (((0, 1), (2,)),)
    assert rule.results == (((0,), (1,), (2,)),)
    b = RuleBuilder([2, 2], [2])
    b.add_factor([0, -1], [0], 8)
    b.add_factor([-1, 1], [1], 16)
    b.add_factor([1, 0], [-1], 4, FactorKind.REDUCTION)
    built = b.build()
    assert str(built.to_attr()) == str(ir.Attribute.parse(RULES[4]))
    assert built.kind(2) is FactorKind.REDUCTION and built.kind(0) is FactorKind.PASS_THROUGH
