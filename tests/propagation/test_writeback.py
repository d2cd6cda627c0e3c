"""write_back: derived shardings land in each op's `sdy.sharding` list, one
attribute per distinct sharding."""
from sdylog.ir import parse_module
from sdylog.ir.shardings import SHARDING, func_result_shardings
from sdylog.ir.walk import op_list
from sdylog.datalog.named_rows import NamedReads
from sdylog.propagation.driver import PropagationOptions, propagate


class _Rows(NamedReads):
    """Rows of propagation's final_* relations, given in any order, read by
    column name as from an engine (the rules' declarations)."""
    relations: dict = {}

    def decl(self, relation):
        from sdylog.datalog.cache import rule_program
        from sdylog.propagation.driver import PROGRAM_FILE
        return rule_program(str(PROGRAM_FILE)).relation(relation)

    def scan(self, relation):
        return self.relations[relation]

    def read(self, relation):
        return sorted(self.relations[relation])

MODULE = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.negate %a : tensor<8x4xf32>
  %1 = stablehlo.add %0, %b : tensor<8x4xf32>
  %2 = stablehlo.abs %1 : tensor<8x4xf32>
  %3 = stablehlo.reduce(%2 init: %c) across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
   reducer(%x: tensor<f32>, %y: tensor<f32>) {
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  return %4 : tensor<8x4xf32>
}
"""


def test_derived_shardings_are_written_once_per_distinct_sharding():
    module = parse_module(MODULE)
    with module.context:
        propagate(module, PropagationOptions())
        lists = {op.name if op.name != "stablehlo.add" or str(op.results[0].type) != "tensor<f32>" else "body add":
                 op.attributes[SHARDING] for op in op_list(module.operation) if SHARDING in op.attributes}
        assert "body add" not in lists   # a reduce body's scalars have no sharding
        full = lists["stablehlo.negate"]
        assert str(full) == '#sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", ?}]>]>'
        # equal shardings are the same (uniqued) attribute, built from one content
        assert lists["stablehlo.add"] == full and lists["stablehlo.abs"] == full
        assert str(lists["stablehlo.reduce"]) == '#sdy.sharding_per_value<[<@mesh, [{"x", ?}]>]>'
        (result,) = func_result_shardings(module.body.operations[1])
        assert str(result) == '#sdy.sharding<@mesh, [{"x", ?}, {?}]>'


def _propagated_lists(module):
    """Propagate; the module's ops and each op's (name, sharding list) where it has one."""
    propagate(module, PropagationOptions())
    ops = op_list(module.operation)
    return ops, [(op.name, str(op.attributes[SHARDING])) for op in ops if SHARDING in op.attributes]


def test_ops_with_a_list_and_writes_elsewhere_keep_their_entries():
    # %1 has a list of its own (its sharding is kept, not replaced by a fresh
    # one-entry list); the while's edge is written elsewhere, after which the
    # ops' lists are read from the IR again
    module = parse_module("""
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %n: tensor<i32>) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %a : tensor<8x4xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<8x4xf32>
  %r:2 = stablehlo.while(%x = %1, %i = %n) : tensor<8x4xf32>, tensor<i32>
   cond { %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { %y = stablehlo.add %x, %x : tensor<8x4xf32>
        stablehlo.return %y, %i : tensor<8x4xf32>, tensor<i32> }
  %e = sdy.data_flow_edge %r#0 : tensor<8x4xf32>
  %2 = stablehlo.negate %e : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}""")
    with module.context:
        ops, lists = _propagated_lists(module)
        assert lists == [("stablehlo.negate", '#sdy.sharding_per_value<[<@mesh, [{"x", ?}, {"y", ?}]>]>'),
                         ("stablehlo.abs", '#sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>'),   # closed: kept
                         ("stablehlo.add", '#sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>'),
                         ("stablehlo.negate", '#sdy.sharding_per_value<[<@mesh, [{?}, {"y", ?}]>]>')]
        (edge,) = [op for op in ops if op.name == "sdy.data_flow_edge"]
        assert str(edge.attributes["sharding"]) == '#sdy.sharding<@mesh, [{?}, {"y", ?}]>'


def test_dimensions_without_rows_are_open_and_maximal_shardings_have_none():
    # final_dim lists only closed or prioritized dimensions: the writer fills
    # in the others from the rank (a maximal sharding has no dimensions)
    module = parse_module("""
sdy.mesh @mesh = <["x"=2, "y"=2]>
sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%a: tensor<8x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p1, {?}, {}]>},
                %b: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<8x4x2xf32> {
  %0 = stablehlo.negate %a : tensor<8x4x2xf32>
  %1 = stablehlo.abs %b : tensor<8x4xf32>
  return %0 : tensor<8x4x2xf32>
}""")
    with module.context:
        _, lists = _propagated_lists(module)
        assert ("stablehlo.negate", '#sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}, {?}]>]>') in lists
        func = module.body.operations[2]
        args = [str(a) for a in func.attributes["arg_attrs"]]
        assert '{"x"}p1, {?}, {}' in args[0] and "<@maximal, []>" in args[1]
        (result,) = func_result_shardings(func)
        assert str(result) == '#sdy.sharding<@mesh, [{"x", ?}, {?}, {?}]>'


def test_a_tensors_axes_read_in_any_order_name_one_sharding():
    # a tensor's final_dim_axis rows are a set (one bit per distinct row):
    # two tensors whose rows come in different orders share one id, and the
    # attribute lists each dimension's axes in position order
    from sdylog.facts.extract import extract_facts
    from sdylog.propagation.writeback import _Attrs

    module = parse_module('sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>')

    class Rows(_Rows):
        relations = {"final_mesh": [(0, "mesh"), (1, "mesh"), (2, "mesh")],
                     "final_dim_axis": [(0, 0, 1, "y", 1, 2), (1, 1, 0, "z", 1, 2), (0, 0, 0, "x", 1, 2),
                                        (1, 0, 0, "x", 1, 2), (0, 1, 0, "z", 1, 2), (1, 0, 1, "y", 1, 2),
                                        (2, 0, 0, "x", 1, 2)],
                     "final_dim": [(2, 1, 1)], "final_dim_priority": [(2, 1, 3)],
                     "final_replicated": [], "final_unreduced": []}
    with module.context:
        attrs = _Attrs(Rows(), extract_facts(module))
        ids = attrs.ids_of([(0, t) for t in range(3)], [2])   # (value 0, of rank 2, for each tensor)
        assert ids[0] == ids[1] != ids[2]
        assert str(attrs.attrs[ids[0]]) == '#sdy.sharding<@mesh, [{"x", "y", ?}, {"z", ?}]>'
        assert str(attrs.attrs[ids[2]]) == '#sdy.sharding<@mesh, [{"x", ?}, {}p3]>'


def test_replicated_and_unreduced_axes_are_written_in_mesh_order():
    # their rows come in any order (a set); the verifier wants the mesh's
    # order (propagation_pipeline.mlir#16 failed under some hash seeds)
    from sdylog.facts.extract import extract_facts
    from sdylog.propagation.writeback import _Attrs

    module = parse_module('sdy.mesh @mesh = <["a"=2, "b"=4, "c"=2]>')

    class Rows(_Rows):
        relations = {"final_mesh": [(0, "mesh")], "final_dim_axis": [], "final_dim": [], "final_dim_priority": [],
                     "final_replicated": [(0, "b", 2, 2), (0, "a", 1, 2)],
                     "final_unreduced": [(0, "c", 1, 2), (0, "b", 1, 2)]}
    with module.context:
        attrs = _Attrs(Rows(), extract_facts(module))
        (sid,) = attrs.ids_of([(0, 0)], [1])
        assert str(attrs.attrs[sid]) == ('#sdy.sharding<@mesh, [{?}], replicated={"a", "b":(2)2}, '
                                         'unreduced={"b":(1)2, "c"}>')


def test_places_read_the_rows_only_for_the_names_the_module_has():
    # _Places finds the ops of _SPECIAL names from the facts' op names (no scan
    # of the op rows when there are none), and ops with several results
    from sdylog.facts import extract_facts
    from sdylog.propagation.writeback import _SPECIAL, _Places
    module = parse_module("""
func.func @main(%a: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %r:2 = stablehlo.while(%x = %a, %i = %n) : tensor<8xf32>, tensor<i32>
   cond { %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { stablehlo.return %x, %i : tensor<8xf32>, tensor<i32> }
  %e = sdy.data_flow_edge %r#0 : tensor<8xf32>
  return %e : tensor<8xf32>
}""")
    with module.context:
        facts = extract_facts(module)
        places = _Places(facts)
        assert places.special == {op for op, name, *_ in facts.rows("op") if name in _SPECIAL} != set()
        (loop,) = [op for op, name, *_ in facts.rows("op") if name == "stablehlo.while"]
        assert places.several == {loop}
        second = facts.value_ids[facts.ops[loop].results[1]]
        assert places.result_row(second) == (loop, 1, second)
        assert places.result_row(facts.value_ids[facts.ops[0].regions[0].blocks[0].arguments[0]]) is None
        plain = extract_facts(parse_module(MODULE))
        assert not _SPECIAL & plain.op_names and _Places(plain).special == set()
        assert plain.op_names == {name for _, name, *_ in plain.rows("op")}
