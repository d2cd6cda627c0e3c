"""The IR helpers the import/export passes share: symbols, call-graph orders,
dead-op erasure, and reading/writing shardings where Shardy keeps them."""
from __future__ import annotations

import pytest
from jaxlib.mlir import ir

from sdylog.ir import SdylogError, parse_module, print_module
from sdylog.ir.rewrite import erase_trivially_dead_ops
from sdylog.ir.shardings import (add_free_axes, erase_manual_axes, get_sharding, is_equivalent,
                                 set_sharding, transform_shardings, walk_shardings)
from sdylog.ir.symbols import (SymbolTable, funcs_in_call_graph_post_order,
                               funcs_in_call_graph_pre_order, main_func, symbol_dce, symbol_name_of)
from sdylog.ir.walk import op_list, op_names, walk_ops

FUNCS = '''
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @b(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @a(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @only_from_unused(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @only_from_unused(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func @public_unused(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
'''


def names(ops):
    return [symbol_name_of(op) for op in ops]


def test_symbol_table_renames_with_one_counter():
    module = parse_module(FUNCS)
    with module.context:
        table = SymbolTable(module)
        got = [table.insert_at_end(table.append_clone(table.lookup(n))) for n in ("b", "b", "a", "b_0")]
        assert got == ["b_0", "b_1", "a_2", "b_0_3"]
        assert names(module.body.operations)[-4:] == got


def test_symbol_dce_keeps_public_and_reachable():
    module = parse_module(FUNCS)
    with module.context:
        symbol_dce(module)
        assert names(module.body.operations) == ["main", "a", "b", "public_unused"]


# @kept is referenced by a custom call only, @dead only from a dead function.
REFERENCED_NOT_CALLED = '''
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @b(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @foo(%0) {called_computations = [@kept]} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func private @kept(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
func.func private @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @dead(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @dead(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
'''


def private_mesh(name: str) -> str:
    return f'"sdy.mesh"() <{{sym_name = "{name}", mesh = #sdy.mesh<["x"=2]>}}> {{sym_visibility = "private"}} : () -> ()'


# Private meshes that only shardings name: a function argument's, an op's
# sdy.sharding list, a constraint's sharding, a named computation's
# out_shardings; @unused is named by none.
MESHES_NAMED_BY_SHARDINGS = "\n".join(private_mesh(n) for n in ("arg", "op", "constraint", "nc", "unused")) + '''
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@arg, [{"x"}]>}) -> tensor<4xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@op, [{"x"}]>]>} : tensor<4xf32>
  %1 = sdy.sharding_constraint %0 <@constraint, [{"x"}]> : tensor<4xf32>
  %2 = sdy.named_computation<"n">(%1) out_shardings=[<@nc, [{"x"}]>] (%x: tensor<4xf32>) {
    sdy.return %x : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
'''


def nested_chain(n: int, dead: bool = False) -> str:
    """@main calls @f0, each @fi calls @f(i+1), each call nested in a named
    computation; with `dead`, a private @g calls @f0 too and nothing calls @g."""
    def func(name, callee, private=True):
        call = (f'%0 = sdy.named_computation<"n">(%a) (%x: tensor<4xf32>) {{\n'
                f'    %c = func.call @{callee}(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
                f'    sdy.return %c : tensor<4xf32>\n  }} : (tensor<4xf32>) -> tensor<4xf32>\n  return %0'
                if callee else "return %a")
        return (f"func.func {'private ' if private else ''}@{name}(%a: tensor<4xf32>) -> tensor<4xf32> {{\n"
                f"  {call} : tensor<4xf32>\n}}")
    funcs = [func("main", "f0", private=False)]
    funcs += [func(f"f{i}", f"f{i + 1}" if i + 1 < n else None) for i in range(n)]
    return "\n".join(funcs + ([func("g", "f0")] if dead else []))


@pytest.mark.parametrize("text", [FUNCS, REFERENCED_NOT_CALLED, FUNCS.replace("func.func private @unused",
                                                                            "func.func @unused"),
                                  nested_chain(5), nested_chain(5, dead=True),
                                  MESHES_NAMED_BY_SHARDINGS])
def test_symbol_dce_given_the_calls_agrees_with_the_plain_walk(text):
    """With the calls known (a census'), symbol-dce skips looking for
    references when the calls keep everything live: same result as without."""
    from sdylog.passes.census import Census
    plain, given = parse_module(text), parse_module(text)
    with plain.context:
        erased = symbol_dce(plain)
        assert symbol_dce(given, calls=lambda: Census.of(given).ops("func.call")) == erased
        assert print_module(given) == print_module(plain)


def test_symbol_dce_given_calls_that_keep_all_live_looks_for_no_reference(monkeypatch):
    from sdylog.ir import symbols
    from sdylog.passes.census import Census
    module = parse_module(nested_chain(50))
    monkeypatch.setattr(symbols, "symbol_refs", lambda op: pytest.fail("references looked for"))
    with module.context:
        assert symbol_dce(module, calls=lambda: Census.of(module).ops("func.call")) == 0


def test_symbol_dce_keeps_what_only_a_non_call_references():
    module = parse_module(REFERENCED_NOT_CALLED)
    with module.context:
        assert symbol_dce(module) == 2
        assert names(module.body.operations) == ["main", "b", "kept"]


def test_symbol_dce_keeps_a_private_mesh_a_sharding_names():
    """As MLIR's symbol-dce (it finds references inside sdy's attributes):
    Shardy's `-symbol-dce` keeps all but @unused here."""
    module = parse_module(MESHES_NAMED_BY_SHARDINGS)
    with module.context:
        assert symbol_dce(module) == 1
        assert names(module.body.operations) == ["arg", "op", "constraint", "nc", "main"]


def test_call_graph_orders():
    module = parse_module(FUNCS)
    with module.context:
        # from the external node: main -> (b, a); a -> b; then unused -> only_from_unused
        post = names(funcs_in_call_graph_post_order(module))
        assert post == ["b", "a", "main", "only_from_unused", "unused", "public_unused"]
        assert names(funcs_in_call_graph_pre_order(module)) == list(reversed(post))


def test_call_graph_from_a_census_is_the_walked_one():
    """The call-graph helpers given a census' calls (Census.calls_in) agree
    with the ones that walk each function."""
    from sdylog.ir.symbols import calls_in_call_graph_post_order, check_no_recursion
    from sdylog.passes.census import Census

    module = parse_module(FUNCS)
    with module.context:
        found = Census.of(module)
        assert (names(funcs_in_call_graph_post_order(module, calls_in=found.calls_in))
                == names(funcs_in_call_graph_post_order(module)))
        assert calls_in_call_graph_post_order(module, found.calls_in) == calls_in_call_graph_post_order(module)
        check_no_recursion(module, calls_in=found.calls_in)
    recursive = parse_module(FUNCS.replace("func.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }",
                                           "func.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                                           "  %0 = call @a(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
                                           "  return %0 : tensor<4xf32>\n}"))
    with recursive.context, pytest.raises(SdylogError, match="recursive call"):
        check_no_recursion(recursive, calls_in=Census.of(recursive).calls_in)


def test_replace_func_shardings_sets_removes_and_writes_only_a_change():
    from sdylog.ir.shardings import func_result_shardings, replace_func_shardings

    module = parse_module('''
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>, jax.result_info = "r"}, tensor<4xf32>) {
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}''')
    with module.context:
        func = next(op for op in walk_ops(module.operation) if op.name == "func.func")
        x = ir.Attribute.parse('#sdy.sharding<@mesh, [{"x"}]>')
        open_ = ir.Attribute.parse('#sdy.sharding<@mesh, [{?}]>')
        before = func.attributes["res_attrs"]
        assert not replace_func_shardings(func, [x, None], results=True)
        assert func.attributes["res_attrs"] == before
        assert replace_func_shardings(func, [None, open_], results=True)
        assert func_result_shardings(func) == [None, open_]
        assert "jax.result_info" in ir.DictAttr(ir.ArrayAttr(func.attributes["res_attrs"])[0])
        assert not replace_func_shardings(func, [None, None])   # (arguments: none had one)
        assert "arg_attrs" not in func.attributes


def test_main_func():
    module = parse_module(FUNCS)
    with module.context:
        assert symbol_name_of(main_func(module)) == "main"
    two = parse_module("func.func @f() { return }\nfunc.func @g() { return }")
    with two.context, pytest.raises(SdylogError, match="Failed to lookup function: main"):
        main_func(two)


def test_erase_trivially_dead_ops():
    text = '''
sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %a : tensor<4xf32>
  %1 = stablehlo.negate %0 : tensor<4xf32>
  %2 = stablehlo.custom_call @effect(%a) {has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.custom_call @pure(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = sdy.sharding_constraint %a <@m, [{"p"}]> : tensor<4xf32>
  %5 = stablehlo.while(%i = %a) : tensor<4xf32>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      stablehlo.return %i : tensor<4xf32>
    }
  return %a : tensor<4xf32>
}'''
    module = parse_module(text)
    with module.context:
        assert erase_trivially_dead_ops(module.operation) == 4   # abs, negate, pure call, while
        out = print_module(module)
    assert "@effect" in out and "sdy.sharding_constraint" in out
    assert "abs" not in out and "negate" not in out and "@pure" not in out and "while" not in out


MANUAL = '''
sdy.mesh @m = <["p"=2, "q"=2, "r"=2]>
func.func @main(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"p", "q"}, {?}], replicated={"r"}>]
      out_shardings=[<@m, [{"p"}, {}]>] manual_axes={"p"} (%x: tensor<4x8xf32>) {
    sdy.return %x : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}'''


def test_manual_computation_body_argument_sharding():
    module = parse_module(MANUAL)
    with module.context:
        mc = next(op for op in walk_ops(module.operation) if op.name == "sdy.manual_computation")
        arg = mc.regions[0].blocks[0].arguments[0]
        inner = get_sharding(arg)
        assert str(inner) == '#sdy.sharding<@m, [{"q"}, {?}], replicated={"r"}>'
        new = ir.Attribute.parse('#sdy.sharding<@m, [{"q"}, {}]>')
        set_sharding(arg, new)
        # the manual prefix stays; replicated and unreduced axes stay the outer ones
        assert 'in_shardings=[<@m, [{"p", "q"}, {}], replicated={"r"}>]' in print_module(module)
        assert str(erase_manual_axes(add_free_axes(inner, new, ["p"]), ["p"])) == \
            '#sdy.sharding<@m, [{"q"}, {}], replicated={"r"}>'


def test_kept_manual_views_are_the_computed_ones():
    """erase_*_axes and add_free_axes keep their results (per sharding and
    manual axes): what they give is what the computation gives, in another
    run (another parse of the module, the same context) too."""
    from sdylog.ir.shardings import _add_free_axes, _erase_axes, erase_free_axes

    for _ in range(2):
        module = parse_module(MANUAL)
        with module.context:
            shardings = [ir.Attribute.parse(t) for t in (
                '#sdy.sharding<@m, [{"p", "q"}, {?}], replicated={"r"}>', '#sdy.sharding<@m, [{"q"}, {"p"}]>',
                '#sdy.sharding<@m, [{}, {}], unreduced={"p", "r"}>')]
            for s in shardings:
                for manual in (["p"], ["p", "q"], ["r"]):
                    assert erase_manual_axes(s, manual) == _erase_axes.__wrapped__(s, tuple(manual), False)
                    assert erase_free_axes(s, manual) == _erase_axes.__wrapped__(s, tuple(manual), True)
                    for new in shardings:
                        assert add_free_axes(s, new, manual) == _add_free_axes.__wrapped__(s, new, tuple(manual))


def test_walk_shardings_order():
    text = '''
sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>]>} : tensor<4xf32>
  %1 = sdy.sharding_constraint %0 <@m, [{"p", ?}]> : tensor<4xf32>
  return %1 : tensor<4xf32>
}'''
    module = parse_module(text)
    seen = []
    with module.context:
        walk_shardings(module.operation, lambda s, v: seen.append(str(s)))
    assert seen == ['#sdy.sharding<@m, [{"p"}]>', '#sdy.sharding<@m, [{}]>',
                    '#sdy.sharding<@m, [{?}]>', '#sdy.sharding<@m, [{"p", ?}]>']


def test_transform_once_per_sharding_is_the_same_transform():
    text = '''
sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{?}]>}) -> tensor<4xf32> {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>]>} : tensor<4xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>]>} : tensor<4xf32>
  %2 = stablehlo.abs %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}]>]>} : tensor<4xf32>
  %3 = sdy.sharding_constraint %2 <@m, [{?}]> : tensor<4xf32>
  return %3 : tensor<4xf32>
}'''
    outputs, calls = [], []
    for once in (False, True):
        module = parse_module(text)
        with module.context:
            def close(s, v):
                calls.append(once)
                return ir.Attribute.parse(str(s).replace(", ?", "").replace("?", ""))
            assert transform_shardings(module.operation, close, of_sharding_only=once)
            assert not transform_shardings(module.operation, lambda s, v: s, of_sharding_only=once)
        outputs.append(print_module(module))
    assert outputs[0] == outputs[1] and "?" not in outputs[1]
    assert calls.count(False) == 5 and calls.count(True) == 2   # two distinct shardings


BY_NAME = '''
sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{?}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>]>} : tensor<4xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{?}]>]>} : tensor<4xf32>
  %2 = stablehlo.abs %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}]>]>} : tensor<4xf32>
  %3 = stablehlo.negate %2 : tensor<4xf32>
  %4 = sdy.sharding_constraint %3 <mesh<["p"=2]>, [{?}]> : tensor<4xf32>
  %5 = stablehlo.abs %4 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"p", ?}]>]>} : tensor<4xf32>
  return %5 : tensor<4xf32>
}'''


def _by_name(module) -> dict:
    groups: dict = {}
    for op in walk_ops(module.operation):
        groups.setdefault(op.name, []).append(op)
    return groups


def test_walk_shardings_by_name_sees_each_distinct_sharding_once():
    module = parse_module(BY_NAME)
    in_order, by_name = [], []
    with module.context:
        walk_shardings(module.operation, lambda s, v: in_order.append(str(s)))
        walk_shardings(None, lambda s, v: by_name.append((str(s), v)), by_name=_by_name(module))
    assert len(in_order) == 7 and sorted(set(in_order)) == sorted(s for s, _ in by_name)
    assert len(by_name) == 4 and all(v is None for _, v in by_name)


def test_transform_shardings_by_name_is_the_ordered_transform():
    outputs, calls = [], []
    for grouped in (False, True):
        module = parse_module(BY_NAME)
        with module.context:
            def close(s, v):
                calls.append(str(s))
                return ir.Attribute.parse(str(s).replace(", ?", "").replace("?", ""))
            by_name = _by_name(module) if grouped else None
            assert transform_shardings(module.operation, close, of_sharding_only=True, by_name=by_name)
        outputs.append(print_module(module))
        # (all closed now: a second time writes nothing, and says so)
        assert not transform_shardings(module.operation, lambda s, v: s, of_sharding_only=True, by_name=by_name)
    assert outputs[0] == outputs[1] and "?" not in outputs[1]
    assert len(calls) == 8   # each pass: four distinct shardings, each closed once


def test_is_equivalent(mlir_ctx):
    def s(t):
        return ir.Attribute.parse(t)
    assert is_equivalent(s('#sdy.sharding<@m, [{"p", ?}]>'), s('#sdy.sharding<@m, [{"p"}]>'))
    assert is_equivalent(s('#sdy.sharding<@m, [{?}]>'), None)
    assert not is_equivalent(s('#sdy.sharding<@m, [{"p"}]>'), None)
    # jaxlib's Shardy ignores unreduced axes here (newer versions do not)
    assert is_equivalent(s('#sdy.sharding<@m, [{}], unreduced={"p"}>'), None)


def test_data_flow_edges_of_a_while():
    text = '''
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.while(%i = %a) : tensor<4xf32>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.negate %i : tensor<4xf32>
      stablehlo.return %n : tensor<4xf32>
    }
  return %0 : tensor<4xf32>
}'''
    from sdylog.ir.shardings import (data_flow_edge_of_source, data_flow_edge_of_target, edge_sources,
                                     non_owner_targets)
    from sdylog.passes.add_data_flow_edges import add_data_flow_edges

    module = parse_module(text)
    with module.context:
        loop = next(op for op in walk_ops(module.operation) if op.name == "stablehlo.while")
        owner = loop.results[0]
        cond_arg, body_arg = loop.regions[0].blocks[0].arguments[0], loop.regions[1].blocks[0].arguments[0]
        assert non_owner_targets(loop, owner) == [cond_arg, body_arg]
        add_data_flow_edges(loop)
        edge = data_flow_edge_of_target(body_arg)        # a non-owner target finds the owner's edge
        assert edge is not None and edge.operands[0] == owner
        body_return = list(loop.regions[1].blocks[0].operations)[-1]
        assert data_flow_edge_of_source(body_return, 0) == edge
        assert data_flow_edge_of_source(loop, 0) == edge
        operand, yielded = edge_sources(loop, owner)
        assert operand == loop.operands[0] and yielded.owner.name == "stablehlo.negate"


def test_data_flow_edges_start_with_their_owners_sharding():
    """add_data_flow_edges reads the op's owner shardings once: each edge gets
    what get_sharding said of its owner before, an edge's own where the owner
    had one already."""
    text = '''
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0:2 = "stablehlo.optimization_barrier"(%a, %b) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"y"}]>]>}
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}'''
    from sdylog.ir.shardings import data_flow_edge_of_owner, get_sharding, set_sharding
    from sdylog.passes.add_data_flow_edges import add_data_flow_edges

    module = parse_module(text)
    with module.context:
        barrier = next(op for op in walk_ops(module.operation) if op.name == "stablehlo.optimization_barrier")
        before = [get_sharding(r) for r in barrier.results]
        add_data_flow_edges(barrier)
        edges = [data_flow_edge_of_owner(r) for r in barrier.results]
        assert [e.attributes["sharding"] for e in edges] == before
        set_sharding(barrier.results[1], ir.Attribute.parse('#sdy.sharding<@mesh, [{"x", "y"}]>'))   # (the edge's)
        expected = [get_sharding(r) for r in barrier.results]
        assert expected[1] != before[1]
        add_data_flow_edges(barrier)    # (again: new edges on the owners, before the old ones)
        assert [data_flow_edge_of_owner(r).attributes["sharding"] for r in barrier.results] == expected


def test_op_names_share_one_string_per_name():
    module = parse_module(FUNCS)
    ops = op_list(module.operation)
    names = op_names(ops)
    assert names == [op.name for op in ops]
    calls = [n for n in names if n == "func.call"]
    assert len(calls) == 4 and all(n is calls[0] for n in calls)
