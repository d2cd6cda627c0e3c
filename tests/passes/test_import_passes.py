"""Import passes on small modules of our own: explicit expectations, and the
output compared with Shardy's (jaxlib) for the same input."""
from __future__ import annotations

import pytest

from sdylog.ir import SdylogError
from passes_oracle import ours, same_text, shardy

MESH = 'sdy.mesh @m = <["p"=2, "q"=4]>\n'

# --- lift-inlined-meshes --------------------------------------------------------------
LIFT = '''
sdy.mesh @first = <["p"=2, "q"=4]>
sdy.mesh @again = <["p"=2, "q"=4]>
sdy.mesh @mesh = <["r"=8]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@again, [{"p"}, {}]>},
                %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["p"=2, "q"=4]>, [{}, {"q"}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["s"=2]>, [{"s"}, {}]>}) {
  %0 = stablehlo.add %a, %b {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[5]>, []>]>} : tensor<8x8xf32>
  %1 = stablehlo.multiply %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[]>, [{}, {}]>]>} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
'''


def test_lift_inlined_meshes_dedups_and_names_new_meshes():
    out = ours(LIFT, "sdy-lift-inlined-meshes")
    assert "@again" not in out
    assert '#sdy.sharding<@first, [{"p"}, {}]>' in out   # merged into the first identical mesh
    assert '#sdy.sharding<@first, [{}, {"q"}]>' in out   # inlined copy of an existing mesh
    assert 'sdy.mesh @mesh_0 = <["s"=2]>' in out          # "mesh" is taken
    assert "sdy.mesh @maximal_mesh_5 = <[], device_ids=[5]>" in out
    assert "sdy.mesh @empty_mesh = <[]>" in out
    assert 'stablehlo.mesh = {axes = [{name = "r", size = 8 : i64}]}' in out


def test_lift_inlined_meshes_matches_shardy():
    assert same_text(ours(LIFT, "sdy-lift-inlined-meshes"), shardy(LIFT, "sdy-lift-inlined-meshes"))


# No two mesh symbols alike: inlined meshes (found after a look at every
# sharding) take names in the order Shardy meets them; or there are none.
LIFT_NO_MERGE = '''
sdy.mesh @mesh = <["r"=8]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"r"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"r"}]>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <mesh<["t"=4]>, [{"t"}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.add %1, %0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["s"=2]>, [{}, {"s"}]>]>} : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
'''
LIFT_NONE = '''
sdy.mesh @mesh = <["r"=8]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"r"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"r"}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
'''


def test_lift_inlined_meshes_without_merges():
    out = ours(LIFT_NO_MERGE, "sdy-lift-inlined-meshes")
    assert 'sdy.mesh @mesh_0 = <["t"=4]>' in out and 'sdy.mesh @mesh_1 = <["s"=2]>' in out
    assert "sdy.sharding_constraint %0 <@mesh_0, [{\"t\"}, {}]>" in out
    assert same_text(out, shardy(LIFT_NO_MERGE, "sdy-lift-inlined-meshes"))
    out = ours(LIFT_NONE, "sdy-lift-inlined-meshes")
    assert out.count("sdy.mesh @") == 1 and "stablehlo.mesh = " in out
    assert same_text(out, shardy(LIFT_NONE, "sdy-lift-inlined-meshes"))


# --- remove-size-one-axes ---------------------------------------------------------------
SIZE_ONE = '''
sdy.mesh @m = <["p"=2, "one"=1, "q"=4]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"one"}p1, {"q", ?}p2], replicated={"p"}>},
               %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q", "one"}, {}], replicated={"p"}>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {}], unreduced={"one"}>}) {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"p", "one"}, {}]>] out_shardings=[<@m, [{"p"}, {}], replicated={"one"}>]
      manual_axes={"p", "one"} (%x: tensor<4x8xf32>) {
    sdy.return %x : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
'''


def test_remove_size_one_axes():
    out = ours(SIZE_ONE, "sdy-remove-size-one-axes")
    # A closed dimension left without axes loses its priority; an open one keeps it.
    assert '#sdy.sharding<@m, [{}, {"q", ?}p2], replicated={"p"}>' in out
    assert '#sdy.sharding<@m, [{"q"}, {}], replicated={"p"}>' in out
    assert "unreduced" not in out
    assert 'in_shardings=[<@m, [{"p"}, {}]>]' in out
    assert same_text(out, shardy(SIZE_ONE, "sdy-remove-size-one-axes"))


def test_remove_size_one_axes_needs_a_mesh_with_one():
    text = MESH + '''
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=1]>, [{"z"}]>}) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}'''
    assert '[{"z"}]' in ours(text, "sdy-remove-size-one-axes")


# --- propagate-sharding-from-func-to-call ------------------------------------------------
FUNC_TO_CALL = MESH + '''
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0:2 = call @two(%a) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  %1 = call @none(%0#0) : (tensor<8xf32>) -> tensor<8xf32>
  %2:2 = call @two(%1) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>, <@m, [{}]>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %2#1 : tensor<8xf32>
}
func.func private @two(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>}) {
  return %a, %a : tensor<8xf32>, tensor<8xf32>
}
func.func private @none(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
'''


def test_propagate_sharding_from_func_to_call():
    out = ours(FUNC_TO_CALL, "sdy-propagate-sharding-from-func-to-call")
    assert '@two(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>, <@m, [{"q"}]>]>}' in out
    assert "call @none(%0#0) :" in out
    assert same_text(out, shardy(FUNC_TO_CALL, "sdy-propagate-sharding-from-func-to-call"))


# --- constant-or-scalar-splitter -----------------------------------------------------------
SPLIT = '''
func.func @main(%a: tensor<4x4xf32>, %s: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = stablehlo.constant dense<2.0> : tensor<4x4xf32>
  %n = stablehlo.negate %c : tensor<4x4xf32>
  %i = stablehlo.iota dim = 1 : tensor<4x4xf32>
  %sum = stablehlo.add %n, %i : tensor<4x4xf32>
  %x = stablehlo.multiply %sum, %a : tensor<4x4xf32>
  %y = stablehlo.divide %a, %sum : tensor<4x4xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
  %z = stablehlo.subtract %b, %x : tensor<4x4xf32>
  %w = stablehlo.add %b, %y : tensor<4x4xf32>
  return %z, %w, %n : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
'''


def test_constant_or_scalar_splitter_copies_per_use():
    out = ours(SPLIT, "sdy-constant-or-scalar-splitter")
    assert "stablehlo.constant" not in out
    # multiply, divide and return each get their own constant, negate (and iota)
    assert out.count("sdy.constant") == 3
    assert out.count("stablehlo.negate") == 3
    assert out.count("stablehlo.iota") == 2
    assert out.count("stablehlo.broadcast_in_dim") == 2  # one per use of the scalar broadcast
    assert same_text(out, shardy(SPLIT, "sdy-constant-or-scalar-splitter"))


SPLIT_CALLS = '''
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = call @konst() : () -> tensor<4xf32>
  %1 = stablehlo.add %0, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %a : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
func.func private @konst() -> tensor<4xf32> {
  %0 = call @inner() : () -> tensor<4xf32>
  %1 = stablehlo.exponential %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @inner() -> tensor<4xf32> {
  %c = stablehlo.constant dense<3.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}
'''


def test_constant_or_scalar_splitter_clones_constant_callees():
    out = ours(SPLIT_CALLS, "sdy-constant-or-scalar-splitter")
    assert 'sdy.original_func_name = "konst"' in out and 'sdy.original_func_name = "inner"' in out
    assert same_text(out, shardy(SPLIT_CALLS, "sdy-constant-or-scalar-splitter"))


# Uses far from their constants: after ops that use none (which the splitter
# skips once every use found so far was seen), twice in one op, inside a
# while body, through a scalar whose clones add uses, and by a sharding group.
SPLIT_FAR_USES = '''
func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = stablehlo.exponential %a : tensor<4xf32>
  %s = stablehlo.constant dense<2.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %l = stablehlo.log %e : tensor<4xf32>
  %c = stablehlo.constant dense<3.0> : tensor<4xf32>
  %t = stablehlo.tanh %l : tensor<4xf32>
  %m = stablehlo.multiply %c, %c : tensor<4xf32>
  %n = stablehlo.negate %t : tensor<4xf32>
  %w:2 = stablehlo.while(%it = %i, %x = %n) : tensor<i32>, tensor<4xf32>
    cond {
      %k = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %it, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %y = stablehlo.add %x, %b : tensor<4xf32>
      %z = stablehlo.subtract %y, %m : tensor<4xf32>
      stablehlo.return %it, %z : tensor<i32>, tensor<4xf32>
    }
  %r = stablehlo.add %w#1, %b : tensor<4xf32>
  %q = stablehlo.abs %r : tensor<4xf32>
  %u = stablehlo.multiply %q, %c : tensor<4xf32>
  %v = stablehlo.sine %u : tensor<4xf32>
  %d = stablehlo.constant dense<1.0> : tensor<4xf32>
  %o = stablehlo.cosine %v : tensor<4xf32>
  %p = stablehlo.add %o, %d : tensor<4xf32>
  return %p, %m : tensor<4xf32>, tensor<4xf32>
}
func.func @grouped(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<3.0> : tensor<4xf32>
  sdy.sharding_group %c group_id=7 : tensor<4xf32>
  %e = stablehlo.exponential %a : tensor<4xf32>
  %u = stablehlo.multiply %e, %c : tensor<4xf32>
  %v = stablehlo.add %u, %c : tensor<4xf32>
  return %v : tensor<4xf32>
}
'''


def test_constant_or_scalar_splitter_finds_far_uses():
    out = ours(SPLIT_FAR_USES, "sdy-constant-or-scalar-splitter")
    assert out.count("stablehlo.broadcast_in_dim") == 2   # the while body's add and the add after it
    assert out.count("sdy.sharding_group") == 2           # one per copy of the grouped constant
    assert same_text(out, shardy(SPLIT_FAR_USES, "sdy-constant-or-scalar-splitter"))


# --- manual-axes-cleanup -----------------------------------------------------------------------
MANUAL = '''
sdy.mesh @m = <["p"=2, "q"=4, "r"=2]>
func.func @main(%a: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"r", "q":(1)2}, {}]>] out_shardings=[<@m, [{"r", "q":(1)2}, {}]>]
      manual_axes={"r", "q"} (%x: tensor<4x8xf32>) {
    sdy.return %x : tensor<4x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
'''


def test_manual_axes_cleanup_sorts_and_replicates_unused_parts():
    out = ours(MANUAL, "sdy-manual-axes-cleanup")
    assert 'manual_axes={"q", "r"}' in out
    assert 'in_shardings=[<@m, [{"r", "q":(1)2}, {}], replicated={"q":(2)2}>]' in out
    assert 'out_shardings=[<@m, [{"r", "q":(1)2}, {}], replicated={"q":(2)2}>]' in out
    assert same_text(out, shardy(MANUAL, "sdy-manual-axes-cleanup"))


def test_manual_axes_cleanup_rejects_manual_axes_without_operands():
    text = 'sdy.mesh @m = <["p"=2]>\n' + '''func.func @main() {
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={"p"} () {
    %c = sdy.constant dense<1.0> : tensor<2xf32>
    sdy.return
  } : () -> ()
  return
}'''
    with pytest.raises(SdylogError, match="manual_axes when there are no in/out shardings") as e:
        ours(text, "sdy-manual-axes-cleanup")
    assert e.value.location.endswith(":3:3")


def test_manual_axes_cleanup_reports_attributes_only_or_preserved():
    # (PRESERVED also lets `sdylog opt` skip verifying: only when nothing changed)
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext, lookup
    from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED
    info = lookup("sdy-manual-axes-cleanup")
    module = parse_module(MANUAL)
    with module.context:
        assert info.load()(module, dict(info.options), PassContext()) == ATTRIBUTES_ONLY
        cleaned = str(module)
        assert info.load()(module, dict(info.options), PassContext()) == PRESERVED
        assert str(module) == cleaned


# --- data-flow edges -----------------------------------------------------------------------------
EDGES = MESH + '''
func.func @main(%a: tensor<8xf32>, %t: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
  %0:2 = stablehlo.optimization_barrier %a, %t : tensor<8xf32>, !stablehlo.token
  %1 = sdy.named_computation<"nc">(%0#0) in_shardings=[<@m, [{"p"}]>] (%x: tensor<8xf32>) {
    %2 = stablehlo.abs %x : tensor<8xf32>
    sdy.return %2 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %3:2 = stablehlo.while(%i = %1, %j = %a) : tensor<8xf32>, tensor<8xf32>
      attributes {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>, <@m, [{?}]>]>}
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      stablehlo.return %j, %i : tensor<8xf32>, tensor<8xf32>
    }
  return %3#1, %0#1 : tensor<8xf32>, !stablehlo.token
}
'''


def test_add_data_flow_edges():
    out = ours(EDGES, "sdy-add-data-flow-edges")
    assert 'sdy.data_flow_edge %arg2 sharding=<@m, [{"p"}]>' in out      # body argument owner
    assert 'sdy.data_flow_edge %4#0 sharding=<@m, [{"q"}]>' in out         # while results
    assert out.count("sdy.data_flow_edge") == 5                          # tokens are skipped
    assert same_text(out, shardy(EDGES, "sdy-add-data-flow-edges"))


FUNC_EDGES = MESH + '''
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0:2 = call @f(%a, %a) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}]>, <@m, [{}]>]>} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  %1 = stablehlo.add %0#0, %0#1 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"q"}]>}, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  return %y, %x : tensor<8xf32>, tensor<8xf32>
}
'''


def test_add_func_data_flow_edges():
    out = ours(FUNC_EDGES, "sdy-add-func-data-flow-edges")
    assert out.count("sdy.func_data_flow_edge") == 4
    assert same_text(out, shardy(FUNC_EDGES, "sdy-add-func-data-flow-edges"))


# --- apply-sharding-constraints -------------------------------------------------------------------
CONSTRAINTS = MESH + '''
func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %a, %a : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@m, [{"p"}, {}]> : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <@m, [{}, {"q"}]> : tensor<8x8xf32>
  %3 = stablehlo.multiply %0, %2 : tensor<8x8xf32>
  %4 = stablehlo.negate %b : tensor<8x8xf32>
  %5 = sdy.sharding_constraint %4 <@m, [{"p", ?}, {}]> : tensor<8x8xf32>
  %6:2 = stablehlo.optimization_barrier %3, %5 : tensor<8x8xf32>, tensor<8x8xf32>
  %7 = sdy.sharding_constraint %6#1 <@m, [{"q"}, {}]> : tensor<8x8xf32>
  return %6#0, %7, %3 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
'''


def test_apply_sharding_constraints():
    text = ours(CONSTRAINTS, "sdy-add-data-flow-edges")
    out = ours(text, "sdy-apply-sharding-constraints")
    # The head of a chain applies to its input; later uses read the tail.
    assert 'stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p"}, {}]>]>}' in out
    assert "stablehlo.multiply %2, %2" in out
    # A constraint on a data-flow edge target stays a constraint.
    assert 'sdy.sharding_constraint %8 <@m, [{"q"}, {}]>' in out
    # An open constraint does not apply.
    assert "stablehlo.negate %arg1 :" in out
    assert same_text(out, shardy(text, "sdy-apply-sharding-constraints"))


# --- sharding groups -------------------------------------------------------------------------------
GROUPS = '''
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) {
  sdy.sharding_group %a group_id = 40 : tensor<4xf32>
  sdy.sharding_group %b group_id = 11 : tensor<4xf32>
  sdy.sharding_group %c group_id = 40 : tensor<4xf32>
  sdy.sharding_group %c group_id = 7 : tensor<4xf32>
  sdy.sharding_group %a group_id = 7 : tensor<4xf32>
  return
}
'''


def test_sharding_group_import_merges_and_renumbers():
    out = ours(GROUPS, "sdy-sharding-group-import")
    assert out.count("group_id=0") == 2 and out.count("group_id=1") == 1
    assert same_text(out, shardy(GROUPS, "sdy-sharding-group-import"))


def test_sharding_group_import_rejects_different_shapes():
    text = '''func.func @main(%a: tensor<4xf32>, %b: tensor<8xf32>) {
  sdy.sharding_group %a group_id = 3 : tensor<4xf32>
  sdy.sharding_group %b group_id = 3 : tensor<8xf32>
  return
}'''
    with pytest.raises(SdylogError, match="must have the same shape for groupId: 3") as e:
        ours(text, "sdy-sharding-group-import")
    assert e.value.location.endswith(":3:3")


# --- call graph ----------------------------------------------------------------------------------------
CALLS = MESH + '''
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @outer(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @outer(%0) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"q"}]>]>, other = 1 : i32} : (tensor<8xf32>) -> tensor<8xf32>
  %2 = call @leaf(%1) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @outer(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> tensor<8xf32> {
  %0 = call @leaf(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @leaf(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.cosine %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}
'''


def test_flatten_call_graph_names_copies_like_mlir():
    out = ours(CALLS, "sdy-flatten-call-graph")
    # leaf is first called from outer; main's outer copy brings a leaf copy first.
    for name in ("@leaf_0", "@outer_1", "@leaf_2"):
        assert f"func.func private {name}(" in out
    assert same_text(out, shardy(CALLS, "sdy-flatten-call-graph"))


def test_import_func_calls_after_flattening():
    flat = ours(CALLS, "sdy-flatten-call-graph")
    out = ours(flat, "sdy-import-func-calls")
    assert "func.call" not in out and "call @" not in out
    assert 'sdy.named_computation<"outer">(%arg0) in_shardings=[<@m, [{"p"}]>]' in out
    assert same_text(out, shardy(flat, "sdy-import-func-calls"))


def test_import_func_calls_clones_bodies_and_warns(capsys):
    out = ours(CALLS, "sdy-import-func-calls", options={"add-data-flow-edges-on-named-computations": False})
    assert "has multiple call ops, we need to clone the function body" in capsys.readouterr().err
    assert "sdy.data_flow_edge" not in out
    assert same_text(out, shardy(CALLS, "sdy-import-func-calls{add-data-flow-edges-on-named-computations=false}"))


def test_pre_order_funcs():
    text = '''
func.func private @c() { return }
func.func private @b() { call @c() : () -> () return }
func.func @main() { call @b() : () -> () call @c() : () -> () return }
'''
    out = ours(text, "sdy-pre-order-funcs")
    assert out.index("@main()") < out.index("func.func private @b") < out.index("func.func private @c")
    assert same_text(out, shardy(text, "sdy-pre-order-funcs"))


# --- explicit-gather-scatter-batching -------------------------------------------------------------
BATCHING = '''
func.func @main(%table: tensor<6x10x3xf32>, %col: tensor<6x1xi32>, %upd: tensor<6x3xf32>)
    -> (tensor<6x3xf32>, tensor<6x10x3xf32>) {
  %k = stablehlo.constant dense<1> : tensor<6x1xi32>
  %iota = stablehlo.iota dim = 0 : tensor<6xi32>
  %r = stablehlo.reshape %iota : (tensor<6xi32>) -> tensor<6x1xi32>
  %idx = stablehlo.concatenate %col, %r, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>
  %g = "stablehlo.gather"(%table, %idx) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0, 1],
                                          start_index_map = [1, 0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 1, 3>} : (tensor<6x10x3xf32>, tensor<6x2xi32>) -> tensor<6x3xf32>
  %unused = stablehlo.add %col, %k : tensor<6x1xi32>
  %s = "stablehlo.scatter"(%table, %idx, %upd) <{
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0, 1],
                                                   scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 1>,
    unique_indices = true}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<6x10x3xf32>, tensor<6x2xi32>, tensor<6x3xf32>) -> tensor<6x10x3xf32>
  return %g, %s : tensor<6x3xf32>, tensor<6x10x3xf32>
}
'''


def test_explicit_gather_scatter_batching():
    out = ours(BATCHING, "sdy-explicit-gather-scatter-batching")
    assert "operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1]" in out
    assert "input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1]" in out
    assert "stablehlo.iota" not in out and "stablehlo.concatenate" not in out
    assert "stablehlo.add" not in out and "stablehlo.constant" not in out   # dead code goes too
    assert same_text(out, shardy(BATCHING, "sdy-explicit-gather-scatter-batching"))


# Ops without operands (never constant expressions but as constants and
# iotas), before any constant, while uses are pending and after all were seen.
SPLIT_NO_OPERANDS = '''
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>, tensor<4xf32>) {
  %p = stablehlo.partition_id : tensor<ui32>
  %c = stablehlo.constant dense<3.0> : tensor<4xf32>
  %r = stablehlo.replica_id : tensor<ui32>
  %i = stablehlo.iota dim = 0 : tensor<4xf32>
  %x = stablehlo.add %a, %c : tensor<4xf32>
  %t = stablehlo.after_all : !stablehlo.token
  %y = stablehlo.multiply %x, %c : tensor<4xf32>
  %z = stablehlo.add %y, %i : tensor<4xf32>
  %q = stablehlo.partition_id : tensor<ui32>
  %s = stablehlo.add %r, %q : tensor<ui32>
  %w = stablehlo.subtract %z, %i : tensor<4xf32>
  return %w, %s, %z : tensor<4xf32>, tensor<ui32>, tensor<4xf32>
}
'''


def test_constant_or_scalar_splitter_with_ops_without_operands():
    out = ours(SPLIT_NO_OPERANDS, "sdy-constant-or-scalar-splitter")
    assert out.count("sdy.constant") == 2 and out.count("stablehlo.iota") == 2
    assert same_text(out, shardy(SPLIT_NO_OPERANDS, "sdy-constant-or-scalar-splitter"))


# Sub-computations with a single use all the way down, which the splitter
# leaves where they are (a copy would be the same), next to ones that share a
# value: a scalar broadcast of an argument, a chain through a tensor constant,
# a use inside a while body, a scalar reshaped to a tensor, and a chain one of
# whose inner values has a second use.
SPLIT_SOLE_USES = '''
func.func @main(%a: tensor<4xf32>, %s: tensor<f32>, %i: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %x = stablehlo.add %a, %b : tensor<4xf32>
  %c = stablehlo.constant dense<3.0> : tensor<4xf32>
  %n = stablehlo.negate %c : tensor<4xf32>
  %y = stablehlo.multiply %x, %n : tensor<4xf32>
  %k = stablehlo.constant dense<2.0> : tensor<f32>
  %kb = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %w:2 = stablehlo.while(%it = %i, %v = %y) : tensor<i32>, tensor<4xf32>
    cond {
      %lim = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %it, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %z = stablehlo.add %v, %kb : tensor<4xf32>
      stablehlo.return %it, %z : tensor<i32>, tensor<4xf32>
    }
  %one = stablehlo.constant dense<5.0> : tensor<f32>
  %r = stablehlo.reshape %one : (tensor<f32>) -> tensor<1xf32>
  %d = stablehlo.constant dense<1.0> : tensor<4xf32>
  %e = stablehlo.exponential %d : tensor<4xf32>
  %f = stablehlo.abs %d : tensor<4xf32>
  %g = stablehlo.add %w#1, %e : tensor<4xf32>
  %h = stablehlo.add %g, %f : tensor<4xf32>
  return %h, %x, %r : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>
}
'''


def test_constant_or_scalar_splitter_leaves_sole_uses():
    out = ours(SPLIT_SOLE_USES, "sdy-constant-or-scalar-splitter")
    assert out.count("stablehlo.broadcast_in_dim") == 2 and out.count("stablehlo.negate") == 1
    assert out.count("stablehlo.reshape") == 1
    # %d has two uses: exponential and abs each take a copy of it
    assert out.count("dense<1.000000e+00>") == 2
    assert same_text(out, shardy(SPLIT_SOLE_USES, "sdy-constant-or-scalar-splitter"))



# Broadcasts met when no use of a constant or expansion is pending: one of a
# tensor (no expansion: skipped unread but for its operand's type), and
# expansions of a scalar argument and of a computed scalar, each used twice.
SPLIT_BROADCASTS_NOTHING_PENDING = '''
func.func @main(%a: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %w = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<4xf32>) -> tensor<4x4xf32>
  %x = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %y = stablehlo.add %a, %x : tensor<4xf32>
  %z = stablehlo.multiply %y, %x : tensor<4xf32>
  %n = stablehlo.negate %s : tensor<f32>
  %v = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
  %u = stablehlo.add %w, %v : tensor<4x4xf32>
  %t = stablehlo.add %u, %v : tensor<4x4xf32>
  return %t, %z : tensor<4x4xf32>, tensor<4xf32>
}
'''


def test_constant_or_scalar_splitter_broadcasts_with_nothing_pending():
    out = ours(SPLIT_BROADCASTS_NOTHING_PENDING, "sdy-constant-or-scalar-splitter")
    assert out.count("stablehlo.broadcast_in_dim") == 5   # the tensor's, and each expansion once per use
    assert same_text(out, shardy(SPLIT_BROADCASTS_NOTHING_PENDING, "sdy-constant-or-scalar-splitter"))
