"""The sharding each value carries, as ir_shardings reads it: parsing every
attribute (ShardingReader) and each distinct one once (CachedShardingReader)
agree."""
from __future__ import annotations

import pytest

from sdylog.ir import parse_module
from sdylog.ir.walk import walk_ops
from sdylog.partition.ir_shardings import CachedShardingReader, ShardingReader

MODULE = '''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>]
      manual_axes={"x"} (%b: tensor<2x4xf32>) {
    %1 = stablehlo.negate %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<2x4xf32>
    sdy.return %1 : tensor<2x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = sdy.all_gather [{"x"}, {"y"}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x4xf32>
  %3 = sdy.reshard %2 <@mesh, [{"y"}, {}]> : tensor<8x4xf32>
  %4 = sdy.all_reduce {"x"} %3 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x4xf32>
  %5:2 = stablehlo.while(%i = %4, %j = %4) : tensor<8x4xf32>, tensor<8x4xf32>
    attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>, <@mesh, [{}, {"x"}]>]>}
    cond {
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %i, %j : tensor<8x4xf32>, tensor<8x4xf32>
  }
  %6 = stablehlo.add %5#0, %5#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x4xf32>
  %7 = stablehlo.add %6, %6 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x4xf32>
  return %7 : tensor<8x4xf32>
}'''


def _values(module):
    for op in walk_ops(module.operation):
        for region in op.regions:
            for block in region.blocks:
                yield from block.arguments
        yield from op.results


@pytest.mark.parametrize("reader", [ShardingReader(), CachedShardingReader()])
def test_each_value_carries_its_sharding(reader):
    module = parse_module(MODULE)
    with module.context:
        # (the printer's names: %1 the all_gather, %2 the reshard, %4 the while)
        got = {v.get_name(): reader.sharding_of(v) for v in _values(module)}
    text = {name: None if s is None else "".join(map(str, s.dims)) for name, s in got.items()}
    assert text["%arg0"] == '{"x"}{}' and text["%arg1"] == '{}{"y"}'   # the manual axes removed
    assert text["%1"] == "{}{}" and text["%2"] == '{"y"}{}' and text["%3"] == '{"y"}{}'
    assert text["%4#1"] == '{}{"x"}' and text["%c"] is None
    # a while's carries: its results' shardings
    assert text["%iterArg"] == '{"y"}{}' and text["%iterArg_0"] == '{}{"x"}'


def test_the_readers_agree():
    module = parse_module(MODULE)
    cached, plain = CachedShardingReader(), ShardingReader()
    with module.context:
        values = list(_values(module)) * 2   # (the second time from the cache)
        assert [cached.sharding_of(v) for v in values] == [plain.sharding_of(v) for v in values]
        reduce = next(op for op in walk_ops(module.operation) if op.name == "sdy.all_reduce")
        axes = reduce.attributes["reduction_axes"]
        assert cached.axes(axes) == plain.axes(axes) == cached.axes(axes) and str(plain.axes(axes)[0]) == '"x"'
