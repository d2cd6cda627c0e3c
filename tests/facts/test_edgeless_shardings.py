"""The value_sharding rows of a named or manual computation's results and
body arguments that have no data-flow edge (in a module the import has
not given edges): op_kinds._edgeless_shardings reads them
from the op's out and in shardings, when extracting and when re-reading
(read_shardings). Each must be what get_sharding gives the value, and a
value get_sharding gives none (a named computation without in/out
shardings) has no row. User-level: tests/propagation/regressions/
named_computation_edgeless.mlir (against Shardy)."""
from sdylog.facts import extract_facts
from sdylog.facts.extract import read_shardings
from sdylog.ir import parse_module
from sdylog.ir.shardings import (data_flow_edge_of_owner, get_sharding, set_block_arg_owner_shardings,
                                 set_result_owner_shardings)
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
  %4 = sdy.named_computation<"g">(%2#0) (%e2: tensor<8x4xf32>) {
    sdy.return %e2 : tensor<8x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %4, %2#1 : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


COMPUTATIONS = ("sdy.named_computation", "sdy.manual_computation")


def check_edgeless_rows(facts) -> tuple[int, int]:
    """Checks every owner of the computations' values against get_sharding;
    (values with a sharding, values without)."""
    value_sharding = dict(facts.rows("value_sharding"))
    with_sharding = without = 0
    for op in facts.ops:
        if op is None or op.operation.name not in COMPUTATIONS:
            continue
        for value in list(op.results) + list(op.regions[0].blocks[0].arguments):
            vid = facts.value_ids[value]
            s = get_sharding(value)
            if data_flow_edge_of_owner(value) is not None or s is None:
                assert vid not in value_sharding   # (an edge's own row holds its sharding)
                without += 1
                continue
            assert facts.shardings[value_sharding[vid]] == TensorSharding.from_attr(s)
            with_sharding += 1
    return with_sharding, without


def test_edgeless_values_have_the_sharding_get_sharding_gives():
    module = parse_module(MODULE)
    with module.context:
        # (of 10 owners: 2 with an edge, 2 of @g that has no in/out shardings)
        assert check_edgeless_rows(extract_facts(module)) == (6, 4)


def test_reread_shardings_read_the_owner_lists_again():
    module = parse_module(MODULE)
    with module.context:
        facts = extract_facts(module)
        nc, mc, g = [op for op in facts.ops if op is not None and op.operation.name in COMPUTATIONS]
        # what a step changes in place: new out shardings, in shardings where there were none
        set_result_owner_shardings(nc, [get_sharding(nc.results[1]), get_sharding(nc.results[1])])
        set_result_owner_shardings(mc, [get_sharding(mc.results[1]), get_sharding(mc.results[0])])
        set_block_arg_owner_shardings(g, [get_sharding(nc.regions[0].blocks[0].arguments[0])])
        reread = read_shardings(module, facts)
        assert check_edgeless_rows(reread) == (7, 3)
        before, after = (f.shardings[dict(f.rows("value_sharding"))[facts.value_ids[nc.results[0]]]]
                         for f in (facts, reread))
        assert before != after   # (the reread's row is the new out sharding, not the old one)
