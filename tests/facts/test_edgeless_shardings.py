"""The shardings of a named or manual computation's values that have no
data-flow edge: the facts read them from the op's in and out shardings
(op_kinds._edgeless_shardings); they must be what get_sharding gives."""
from sdylog.facts import extract_facts
from sdylog.ir import parse_module
from sdylog.ir.shardings import data_flow_edge_of_owner, get_sharding
from sdylog.model.sharding import TensorSharding

MODULE = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0:2 = sdy.named_computation<"f">(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{"y"}, {}]>] (%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) {
    %e = sdy.data_flow_edge %b sharding=<@mesh, [{}, {"x"}]> : tensor<8x4xf32>
    %1 = stablehlo.add %a, %e : tensor<8x4xf32>
    sdy.return %1, %a : tensor<8x4xf32>, tensor<8x4xf32>
  } : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  %r = sdy.data_flow_edge %0#1 sharding=<@mesh, [{}, {}]> : tensor<8x4xf32>
  %2:2 = sdy.manual_computation(%0#0, %r) in_shardings=[<@mesh, [{"x", "y"}, {}]>, <@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {"y"}]>] manual_axes={"x"} (%c: tensor<4x4xf32>, %d: tensor<4x4xf32>) {
    %3 = stablehlo.negate %c : tensor<4x4xf32>
    sdy.return %3, %d : tensor<4x4xf32>, tensor<4x4xf32>
  } : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  return %2#0, %2#1 : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


def test_edgeless_values_have_the_sharding_get_sharding_gives():
    module = parse_module(MODULE)
    with module.context:
        facts = extract_facts(module)
        value_sharding = dict(facts.rows("value_sharding"))
        checked = 0
        for op in facts.ops:
            if op is None or getattr(op, "name", None) not in ("sdy.named_computation", "sdy.manual_computation"):
                continue
            owners = list(op.results) + list(op.regions[0].blocks[0].arguments)
            for value in owners:
                vid = facts.value_ids[value]
                if data_flow_edge_of_owner(value) is not None:
                    assert vid not in value_sharding   # (the edge's own row holds its sharding)
                    continue
                assert facts.shardings[value_sharding[vid]] == TensorSharding.from_attr(get_sharding(value))
                checked += 1
        assert checked == 6   # (of 8 owners, 2 with an edge)
