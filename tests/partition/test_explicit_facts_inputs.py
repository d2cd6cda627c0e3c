"""The partitioner's facts (sdylog/partition/facts.py) give rows only to
relations the partition programs read as `.input`: a row given to a relation
the rules derive (as value_dim is, from value_type and type_dim) would be
dropped by run_rules, or on Soufflé, never read."""
from __future__ import annotations

from sdylog.ir import parse_module
from sdylog.partition.facts import add_sharding_rules, explicit_facts, partition_program, run_rules

MODULE = '''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<6x4xf32> {
  %0 = stablehlo.add %a, %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x4xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}'''


def test_every_relation_given_is_an_input():
    module = parse_module(MODULE, "m.mlir")
    with module.context:
        facts = explicit_facts(module)
        add_sharding_rules(facts, lambda op: True)
    inputs = set()
    for name in ("padding", "permutation", "single_device"):
        inputs |= set(partition_program(name).inputs)
    given = {rel for rel, rows in facts.relations.items() if rows}
    assert "value_type" in given and "type_dim" in given
    assert given <= inputs, sorted(given - inputs)


def test_value_dims_derived_from_the_types():
    module = parse_module(MODULE, "m.mlir")
    with module.context:
        facts = explicit_facts(module)
        eng = run_rules("padding", facts)
    dims = {(v, d, n) for v, d, n in eng.read("value_dim")}
    # both arguments and both results: 6x4, one type
    assert len({v for v, _, _ in dims}) == 4
    assert all((v, 0, 6) in dims and (v, 1, 4) in dims for v, _, _ in dims)
    assert {n for _, n in eng.read("value_elems")} == {24}
