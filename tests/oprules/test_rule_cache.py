"""RuleCache and rule_key: each distinct rule built once, never shared between
ops whose rules depend on their neighbourhood."""
from __future__ import annotations

from sdylog.facts.extract import extract_facts
from sdylog.ir import parse_module
from sdylog.ir.walk import walk_ops
from sdylog.oprules import RuleCache, rule_for_op, rule_key

MODULE = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %a, %b : tensor<8x8xf32>
  %1 = stablehlo.add %0, %b {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>} : tensor<8x8xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = stablehlo.dot_general %0, %1, contracting_dims = [0] x [1] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s0 = stablehlo.slice %a [0:4, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %s1 = stablehlo.slice %a [4:8, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %c0 = stablehlo.concatenate %s0, %s1, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %n0 = stablehlo.negate %s0 : tensor<4x8xf32>
  %n1 = stablehlo.negate %s1 : tensor<4x8xf32>
  %c1 = stablehlo.concatenate %n0, %n1, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %u = stablehlo.add %c0, %c1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}, custom>} : tensor<8x8xf32>
  return %2, %3, %u : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}'''


def _ops(module, name):
    return [op for op in walk_ops(module.operation) if op.name == name]


def test_cache_gives_the_rules_of_rule_for_op():
    module = parse_module(MODULE)
    with module.context:
        cache = RuleCache()
        for op in walk_ops(module.operation):
            rule = cache.rule(op)
            assert rule == rule_for_op(op)
            if rule is not None:
                assert cache.attr(rule) == rule.to_attr()


def test_keys():
    module = parse_module(MODULE)
    with module.context:
        add0, add1, user = _ops(module, "stablehlo.add")
        assert rule_key(add0) == rule_key(add1)          # sdy attributes do not count
        assert rule_key(user) is None                    # a user rule is the op's own
        dot0, dot1 = _ops(module, "stablehlo.dot_general")
        assert rule_key(dot0) != rule_key(dot1)          # attributes do
        assert all(rule_key(c) is None for c in _ops(module, "stablehlo.concatenate"))  # producers count


def test_facts_keep_neighbourhood_rules_apart():
    """Two concatenations of the same types: of slices (a permutation) and of
    other values (needs replication) have different rules."""
    module = parse_module(MODULE)
    facts = extract_facts(module)
    concat_ops = {i for i, op in enumerate(facts.ops) if op.name == "stablehlo.concatenate"}
    rules = {r for op, r in facts.rows("op_rule") if op in concat_ops}
    assert len(rules) == 2
    kinds = {(r, kind) for r, f, size, kind in facts.rows("rule_factor") if r in rules and size == 8}
    assert {k for _, k in kinds} >= {"permutation", "need_replication"}
