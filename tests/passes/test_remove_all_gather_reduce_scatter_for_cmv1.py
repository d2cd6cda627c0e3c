"""-sdy-remove-all-gather-reduce-scatter-for-cmv1 on modules of our own,
against Shardy's pass (jaxlib)."""
from __future__ import annotations

from passes_oracle import ours, same_text, shardy

PASS = "sdy-remove-all-gather-reduce-scatter-for-cmv1"
TEXT = '''sdy.mesh @m = <["a"=2, "b"=4]>
func.func @main(%lhs: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b"}]>},
                %rhs: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@m, [{"b"}, {}]>})
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x16xf32>) {
  // a gathered operand used only by the dot goes; the reduce_scatter after it stays
  %0 = sdy.all_gather [{}, {"b"}] %lhs out_sharding=<@m, [{"a"}, {}]> : tensor<8x16xf32>
  %1 = stablehlo.dot_general %0, %rhs, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %2 = sdy.reduce_scatter [{}, {"b"}] %1 out_sharding=<@m, [{"a"}, {"b"}]> : tensor<8x4xf32>
  // a dot whose only user is a reduce_scatter takes its sharding
  %3 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}, {}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %4 = sdy.reduce_scatter [{}, {"b"}] %3 out_sharding=<@m, [{"a"}, {"b"}]> : tensor<8x4xf32>
  // a gather with another user stays
  %5 = sdy.all_gather [{"a"}, {}] %lhs out_sharding=<@m, [{}, {"b"}]> : tensor<8x16xf32>
  %6 = stablehlo.dot %5, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %2, %4, %6, %5 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x16xf32>
}
'''


def test_cmv1_removals_match_shardy():
    out = ours(TEXT, PASS)
    assert same_text(out, shardy(TEXT, PASS))
    assert out.count("sdy.all_gather") == 1 and out.count("sdy.reduce_scatter") == 1
    assert ('stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}, {"b"}]>]>}'
            in out)


def test_dot_with_unreduced_result_keeps_its_reduce_scatter():
    text = TEXT.replace('%3 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}, {}]>]>}',
                        '%3 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}], '
                        'unreduced={"a"}>]>}')
    text = text.replace('%4 = sdy.reduce_scatter [{}, {"b"}] %3 out_sharding=<@m, [{"a"}, {"b"}]>',
                        '%4 = sdy.reduce_scatter [{}, {"b"}] %3 out_sharding=<@m, [{}, {"b"}], unreduced={"a"}>')
    out = ours(text, PASS)
    assert out.count("sdy.reduce_scatter") == 2
    assert same_text(out, shardy(text, PASS))
