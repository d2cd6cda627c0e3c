"""Export passes on small modules of our own: explicit expectations, and the
output compared with Shardy's (jaxlib) for the same input."""
from __future__ import annotations

from passes_oracle import ours, same_text, shardy

MESH = 'sdy.mesh @m = <["p"=2, "q"=4]>\n'

# Shardings as propagation leaves them: edges with shardings, open dimensions,
# replicated axes, sub-axes, non-divisible sizes.
AFTER_PROPAGATION = MESH + '''
func.func @main(%a: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q", ?}p1, {"p", ?}]>})
    -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p", "q"}, {?}]>}, tensor<6x8xf32>) {
  %c0 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>} dense<1.0> : tensor<6x8xf32>
  %c1 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>} dense<1.0> : tensor<6x8xf32>
  %c2 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"q"}], replicated={"p"}>]>} dense<1.0> : tensor<6x8xf32>
  %0 = stablehlo.add %c0, %c1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=6, j=8}>} : tensor<6x8xf32>
  %1 = stablehlo.add %0, %c2 : tensor<6x8xf32>
  %2:2 = stablehlo.optimization_barrier %1, %a : tensor<6x8xf32>, tensor<6x8xf32>
  %3 = sdy.data_flow_edge %2#0 sharding=<@m, [{"q", ?}, {}]> : tensor<6x8xf32>
  %4 = sdy.data_flow_edge %2#1 : tensor<6x8xf32>
  %5 = sdy.sharding_constraint %3 <@m, [{}, {"p"}]> {keep = 1 : i32} : tensor<6x8xf32>
  sdy.sharding_group %5 group_id = 0 : tensor<6x8xf32>
  return %5, %4 : tensor<6x8xf32>, tensor<6x8xf32>
}
'''

EXPORT_PASSES = ["sdy-constant-or-scalar-merger", "sdy-sink-data-flow-edges", "sdy-remove-sharding-groups",
                 "sdy-sharding-constraint-to-reshard", "sdy-update-non-divisible-input-output-shardings",
                 "sdy-remove-sub-axes-in-input-output-shardings", "sdy-close-shardings",
                 "sdy-drop-sharding-rules", "sdy-inline-meshes"]


def test_each_export_pass_matches_shardy():
    text = AFTER_PROPAGATION
    for flag in EXPORT_PASSES:
        nxt = ours(text, flag)
        assert same_text(nxt, shardy(text, flag)), flag
        text = nxt


def test_export_passes_in_sequence():
    out = ours(AFTER_PROPAGATION, *EXPORT_PASSES[:-1])
    assert out.count("sdy.constant") == 2                   # the two identical constants merged
    assert "sdy.data_flow_edge" not in out and "sdy.sharding_group" not in out
    # the barrier takes the edge shardings, fully open where an edge had none
    assert 'optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}, {}]>, <@m, [{}, {}]>]>}' in out
    assert 'sdy.reshard %4#0 <@m, [{}, {"p"}]> {keep = 1 : i32}' in out
    # main: 6 is not divisible by q=4 (gcd 2 keeps "q":(1)2, without priority), and
    # the open dimension then drops the sub-axis
    assert '%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"p"}]>}' in out
    assert '-> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}]>}' in out
    assert "?" not in out and "replicated" not in out and "sdy.sharding_rule" not in out


def test_inline_meshes():
    out = ours(AFTER_PROPAGATION, "sdy-inline-meshes")
    assert "sdy.mesh @m" not in out and "@m," not in out
    assert '#sdy.sharding<mesh<["p"=2, "q"=4]>, [{"q", ?}p1, {"p", ?}]>' in out


FUNC_EDGES = MESH + '''
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @f(%a) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = sdy.func_data_flow_edge %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>]>} : tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> tensor<8xf32> {
  %0 = sdy.func_data_flow_edge %x : tensor<8xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>]>} : tensor<8xf32>
  return %1 : tensor<8xf32>
}
'''


def test_sink_func_data_flow_edges_and_func_results():
    out = ours(FUNC_EDGES, "sdy-sink-func-data-flow-edges")
    assert 'call @f(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>]>}' in out
    assert '%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}]>}' in out  # edge without sharding
    assert same_text(out, shardy(FUNC_EDGES, "sdy-sink-func-data-flow-edges"))
    res = ours(out, "sdy-propagate-to-func-results")
    assert '-> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>})' in res
    assert same_text(res, shardy(out, "sdy-propagate-to-func-results"))


NAMED = MESH + '''
sdy.mesh @other = <["z"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.named_computation<"main">(%a) (%x: tensor<8xf32>) {
    %1 = sdy.data_flow_edge %x sharding=<@m, [{"p"}]> : tensor<8xf32>
    %2 = sdy.named_computation<"inner">(%1) (%y: tensor<8xf32>) {
      %3 = stablehlo.sine %y : tensor<8xf32>
      sdy.return %3 : tensor<8xf32>
    } {execution_thread = "side", tag = "t"} : (tensor<8xf32>) -> tensor<8xf32>
    sdy.return %2 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %4 = sdy.data_flow_edge %0 sharding=<@m, [{"q"}]> : tensor<8xf32>
  return %4 : tensor<8xf32>
}
'''


def test_export_named_computations():
    out = ours(NAMED, "sdy-export-named-computations")
    assert "sdy.named_computation" not in out
    # "main" is taken: the outlined function is renamed; the inner one goes first.
    assert out.index("func.func private @inner(") < out.index("func.func private @main_0(")
    assert 'call @main_0(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>]>}' in out
    assert 'call @inner(%arg0) {tag = "t"}' in out
    assert 'attributes {execution_thread = "side", sdy.original_func_name = "inner"}' in out
    assert same_text(out, shardy(NAMED, "sdy-export-named-computations"))


COPIES = MESH + '''
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @g_0(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = call @g_1(%1) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @g(%x: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>}) {
  return %x : tensor<8xf32>
}
func.func private @g_0(%x: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>}) attributes {sdy.original_func_name = "g"} {
  return %x : tensor<8xf32>
}
func.func private @g_1(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> tensor<8xf32> attributes {sdy.original_func_name = "g"} {
  return %x : tensor<8xf32>
}
'''


def test_unflatten_call_graph_and_func_call_reshards():
    out = ours(COPIES, "sdy-unflatten-call-graph")
    assert out.count("call @g(") == 2 and "call @g_1(" in out and "original_func_name" not in out
    assert same_text(out, shardy(COPIES, "sdy-unflatten-call-graph"))
    fully = ours(COPIES, "sdy-unflatten-call-graph", options={"dedup-functions-fully": True})
    assert fully.count("call @g(") == 3
    assert same_text(fully, shardy(COPIES, "sdy-unflatten-call-graph{dedup-functions-fully=true}"))
    reshards = ours(out, "sdy-insert-func-call-reshards")
    # g_1's result has no sharding: the call's [{"p"}] is restored by a reshard;
    # calls without shardings get g's [{"q"}] and a reshard to closed replicated.
    assert 'sdy.reshard %4 <@m, [{"p"}]>' in reshards
    assert 'sdy.reshard %0 <@m, [{}]>' in reshards
    assert same_text(reshards, shardy(out, "sdy-insert-func-call-reshards"))


def test_remove_propagation_debug_info():
    text = MESH + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>})
    -> (tensor<8xf32> {sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [{"p" = operand-0 -> [result-0]}]}]>}) {
  %0 = stablehlo.abs %a {sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [{"p" = operand-0 -> [result-0]}]}]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}'''
    out = ours(text, "sdy-remove-propagation-debug-info")
    assert "propagation_edges" not in out and 'sdy.sharding = #sdy.sharding<@m' in out
    assert same_text(out, shardy(text, "sdy-remove-propagation-debug-info"))


# Equal constants and scalar broadcasts in a function body, in a while body
# (a region of its own), and in a second function: merged per region only.
MERGE_REGIONS = MESH + '''
func.func @main(%a: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %s0 = sdy.constant dense<2.0> : tensor<f32>
  %c0 = sdy.constant dense<1.0> : tensor<8xf32>
  %w:2 = stablehlo.while(%i = %n, %x = %a) : tensor<i32>, tensor<8xf32>
    cond {
      %k = sdy.constant dense<0> : tensor<i32>
      %p = stablehlo.compare GT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s1 = sdy.constant dense<2.0> : tensor<f32>
      %c1 = sdy.constant dense<1.0> : tensor<8xf32>
      %c2 = sdy.constant dense<1.0> : tensor<8xf32>
      %b1 = stablehlo.broadcast_in_dim %s1, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %b2 = stablehlo.broadcast_in_dim %s0, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %y = stablehlo.add %x, %c1 : tensor<8xf32>
      %z = stablehlo.add %y, %c2 : tensor<8xf32>
      %u = stablehlo.multiply %z, %b1 : tensor<8xf32>
      %v = stablehlo.multiply %u, %b2 : tensor<8xf32>
      stablehlo.return %i, %v : tensor<i32>, tensor<8xf32>
    }
  %c3 = sdy.constant dense<1.0> : tensor<8xf32>
  %s2 = sdy.constant dense<2.0> : tensor<f32>
  %b3 = stablehlo.broadcast_in_dim %s0, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %b4 = stablehlo.broadcast_in_dim %s2, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %r0 = stablehlo.add %w#1, %c0 : tensor<8xf32>
  %r1 = stablehlo.add %r0, %c3 : tensor<8xf32>
  %r2 = stablehlo.multiply %r1, %b3 : tensor<8xf32>
  %r3 = stablehlo.multiply %r2, %b4 : tensor<8xf32>
  %r4 = call @g(%r3) : (tensor<8xf32>) -> tensor<8xf32>
  return %r4 : tensor<8xf32>
}
func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c = sdy.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %a, %c : tensor<8xf32>
  return %0 : tensor<8xf32>
}
'''


def test_merger_merges_per_region():
    out = ours(MERGE_REGIONS, "sdy-constant-or-scalar-merger")
    # main: c3 into c0, s2 into s0, then b4 (now of s0) into b3; the while body:
    # c2 into c1, s1 stays (another region than s0), b1 and b2 differ; @g keeps its own
    assert out.count("dense<1.000000e+00> : tensor<8xf32>") == 3
    assert out.count("dense<2.000000e+00> : tensor<f32>") == 2
    assert out.count("stablehlo.broadcast_in_dim") == 3
    assert same_text(out, shardy(MERGE_REGIONS, "sdy-constant-or-scalar-merger"))


# close-shardings over lists that repeat on ops of different names (each
# distinct list rewritten once, the others replaced by its rewrite), a list
# left as it was, multi-result lists, and function results whose attribute
# dictionaries hold other entries (rebuilt around the new sharding).
CLOSE_REPEATS = MESH + '''
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p", ?}, {?}]>, mhlo.layout_mode = "default"},
                %b: tensor<8x8xf32>)
    -> (tensor<8x8xf32> {jax.result_info = "r0", sdy.sharding = #sdy.sharding<@m, [{?}, {"q"}]>},
        tensor<8x8xf32> {jax.result_info = "r1"}, tensor<8x8xf32> {jax.result_info = "r2", sdy.sharding = #sdy.sharding<@m, [{}, {}]>}) {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}, {?}], replicated={"q"}>]>} : tensor<8x8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}, {?}], replicated={"q"}>]>} : tensor<8x8xf32>
  %2 = stablehlo.negate %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>} : tensor<8x8xf32>
  %3 = stablehlo.add %2, %b {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}, {?}], replicated={"q"}>]>} : tensor<8x8xf32>
  %4:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}, {"q", ?}]>, <@m, [{"p"}, {}]>]>} %3, %2 : tensor<8x8xf32>, tensor<8x8xf32>
  %5 = stablehlo.abs %2 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>} : tensor<8x8xf32>
  return %4#0, %4#1, %5 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
'''


def test_close_shardings_with_repeated_lists_matches_shardy():
    out = ours(CLOSE_REPEATS, "sdy-close-shardings")
    assert "?" not in out and "replicated" not in out
    assert out.count('sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>') == 5
    assert '{jax.result_info = "r0", sdy.sharding = #sdy.sharding<@m, [{}, {"q"}]>}' in out
    assert same_text(out, shardy(CLOSE_REPEATS, "sdy-close-shardings"))


# A manual computation and a call, the first with a dimension q=4 does not divide.
UNEVEN_OWNERS = MESH + '''
func.func @main(%a: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"p"}, {"q"}]>] out_shardings=[<@m, [{"p", "q"}, {}]>]
      manual_axes={"p"} (%x: tensor<3x8xf32>) {
    sdy.return %x : tensor<3x8xf32>
  } : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %1 = func.call @f(%0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {"q"}]>]>} : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %1 : tensor<6x8xf32>
}
func.func private @f(%b: tensor<6x8xf32>) -> tensor<6x8xf32> {
  return %b : tensor<6x8xf32>
}
'''


def test_update_non_divisible_says_whether_it_changed_anything():
    """SHARDINGS_ONLY when a sharding was made even, PRESERVED on a module
    whose shardings are even already (the facts extracted before it stay)."""
    from sdylog.ir.module import parse_module
    from sdylog.passes.census import PRESERVED, SHARDINGS_ONLY
    from sdylog.passes.update_non_divisible_input_output_shardings import run
    module = parse_module(UNEVEN_OWNERS)
    with module.context:
        assert run(module, {}, None) == SHARDINGS_ONLY
        once = str(module)
        assert 'out_shardings=[<@m, [{"p"}, {}]>]' in once     # 6/2 = 3 is not divisible by q=4
        assert run(module, {}, None) == PRESERVED
        assert str(module) == once
    assert same_text(ours(UNEVEN_OWNERS, "sdy-update-non-divisible-input-output-shardings"),
                     shardy(UNEVEN_OWNERS, "sdy-update-non-divisible-input-output-shardings"))
