"""Fact emission on small modules of our own."""
import subprocess
import sys
from pathlib import Path

import pytest

from sdylog.datalog import make_engine
from sdylog.facts import extract_facts
from sdylog.facts.schema import schema
from sdylog.facts.write import facts_text
from sdylog.ir import SdylogError, parse_module

MODULE = """
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2, ?}p1, {}]>},
                %b: tensor<4x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}], replicated={"y"}> : tensor<8x16xf32>
  %2 = call @relu(%1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  sdy.sharding_group %2 group_id=3 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
func.func private @relu(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %m = stablehlo.maximum %x, %c : tensor<8x16xf32>
  return %m : tensor<8x16xf32>
}
"""


def rule_tensors(facts) -> list[tuple]:
    """The rule_tensor rows rules/schema.dl derives from `facts`, sorted."""
    engine = make_engine(schema(), "memory")
    for name in schema().inputs:
        if facts.rows(name):
            engine.load(name, facts.rows(name))
    engine.run()
    return sorted(engine.read("rule_tensor"))


@pytest.fixture(scope="module")
def facts():
    return extract_facts(parse_module(MODULE), "m.mlir")


def by_name(facts, relation):
    return set(facts.rows(relation))


def test_meshes_funcs_values(facts):
    assert by_name(facts, "mesh") == {("mesh", 8)}
    assert by_name(facts, "mesh_axis") == {("mesh", "x", 0, 4), ("mesh", "y", 1, 2)}
    assert by_name(facts, "func") == {("main", 1), ("relu", 0)}
    a = facts.value_ids[facts.ops[0].regions[0].blocks[0].arguments[0]]
    assert ("main", 0, a) in by_name(facts, "func_arg")
    assert (a, "main", 2, "f32") in by_name(facts, "value")
    assert {(a, 0, 8), (a, 1, 4)} <= set(facts.rows_per_value("type_dim"))


def test_ops_in_program_order(facts):
    kinds = [row[1] for row in sorted(facts.rows("op"))]
    assert kinds == ["func.func", "stablehlo.dot_general", "sdy.sharding_constraint", "func.call",
                     "sdy.sharding_group", "func.return", "func.func", "stablehlo.constant",
                     "stablehlo.maximum", "func.return"]
    dot = kinds.index("stablehlo.dot_general")
    assert {r[0] for r in facts.rows("op_operand") if r[0] == dot} == {dot}


def test_user_shardings_are_intervals(facts):
    # func arg 0: dim 0 is "x":(1)2 open with priority 1; dim 1 closed, empty
    a = facts.value_ids[facts.ops[0].regions[0].blocks[0].arguments[0]]
    (sid,) = [s for v, s in facts.rows("value_sharding") if v == a]
    assert {r[1:] for r in facts.rows("sharding_dim") if r[0] == sid} == {(0, 0), (1, 1)}
    assert {r[1:] for r in facts.rows("sharding_dim_priority") if r[0] == sid} == {(0, 1)}
    assert {r[1:] for r in facts.rows("sharding_dim_axis") if r[0] == sid} == {(0, 0, "x", 1, 2)}
    (res_sid,) = [s for f, i, s in facts.rows("func_result_sharding") if (f, i) == ("main", 0)]
    assert (res_sid, 1, 0, "y", 1, 2) in by_name(facts, "sharding_dim_axis")


def test_constraint_group_and_rules(facts):
    ops = {row[1]: row[0] for row in facts.rows("op")}
    con = ops["sdy.sharding_constraint"]
    assert by_name(facts, "sharding_constraint") == {(con,)}
    (con_result,) = [v for o, i, v in facts.rows("op_result") if o == con]
    (sid,) = [s for v, s in facts.rows("value_sharding") if v == con_result]
    assert (sid, "y", 1, 2) in by_name(facts, "sharding_replicated")
    assert len(facts.rows("sharding_group")) == 1 and facts.rows("sharding_group")[0][1] == 3
    dot = ops["stablehlo.dot_general"]
    (rule,) = [r for o, r in facts.rows("op_rule") if o == dot]
    factors = {(f, size, kind) for r, f, size, kind in facts.rows("rule_factor") if r == rule}
    assert factors == {(0, 8, "pass_through"), (1, 16, "pass_through"), (2, 4, "reduction")}
    # lhs dim 1 is the contracting factor; the result is tensor 2
    assert (rule, 0, 1, 0, 2) in by_name(facts, "rule_dim_factor")
    assert {t for o, t, v, r in rule_tensors(facts) if o == dot and r} == {2}


def test_equal_rules_are_shared():
    f = extract_facts(parse_module("""
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.add %a, %a : tensor<4x8xf32>
  %1 = stablehlo.multiply %0, %a : tensor<4x8xf32>
  %2 = stablehlo.add %b, %b : tensor<8x4xf32>
  return %1 : tensor<4x8xf32>
}"""))
    rules = [r for _, r in sorted(f.rows("op_rule"))]
    assert rules[0] == rules[1] != rules[2]  # same shape: one rule; transposed shape: another
    assert len(rule_tensors(f)) == 9


def test_rule_rows_kept_are_those_of_the_rule():
    """A rule's rows are kept per rule (extract._rule_rows): a second
    extraction, whose rules are those of the first, gives the same rows, and
    they are rule_rows' for each rule, under its id."""
    from sdylog.facts.extract import _rule_rows, rule_rows
    from sdylog.oprules import RuleCache
    text = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4x8xf32>
  %1 = stablehlo.dot_general %0, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %2 = stablehlo.reshape %1 : (tensor<4x4xf32>) -> tensor<16xf32>
  %3 = stablehlo.reshape %2 : (tensor<16xf32>) -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}"""
    rules = RuleCache()
    first = extract_facts(parse_module(text), rules=rules)
    again = extract_facts(parse_module(text), rules=rules)
    assert first.relations == again.relations and first.rules == again.rules
    for rule_id, rule in enumerate(again.rules):
        assert _rule_rows(rule) == rule_rows(rule)
        for relation, row in rule_rows(rule)[0]:
            assert (rule_id, *row) in again.rows(relation)


def test_calls_have_no_rule_and_no_edges_of_their_own(facts):
    # propagation crosses calls only once import-func-calls made them named
    # computations (with sdy.data_flow_edge ops) or through func_data_flow_edge ops
    ops = {row[1]: row[0] for row in facts.rows("op")}
    call = ops["func.call"]
    assert not [r for r in facts.rows("op_rule") if r[0] == call]
    assert not facts.rows("edge_source")


WHILE = """
func.func @f(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %r:2 = stablehlo.while(%x = %a, %i = %n) : tensor<4xf32>, tensor<i32>
   cond { %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { %y = stablehlo.add %x, %x : tensor<4xf32>
        stablehlo.return %y, %i : tensor<4xf32>, tensor<i32> }
  %e = sdy.data_flow_edge %r#0 : tensor<4xf32>
  return %e : tensor<4xf32>
}"""


def test_data_flow_edge_sources_and_shared_tensors():
    f = extract_facts(parse_module(WHILE))
    ops = {row[1]: row[0] for row in f.rows("op")}
    w, edge, add = ops["stablehlo.while"], ops["sdy.data_flow_edge"], ops["stablehlo.add"]
    vid = f.value_ids
    sources = {(i, v) for o, i, v in f.rows("edge_source") if o == edge}
    assert sources == {(0, vid[f.ops[w].operands[0]]), (1, vid[f.ops[add].results[0]])}
    # the owner and both block arguments take their sharding from the edge
    edge_value = vid[f.ops[edge].results[0]]
    tensors = dict(f.rows("value_tensor"))
    cond_arg, body_arg = [v for o, r, i, v in f.rows("block_arg") if o == w and i == 0]
    assert tensors[vid[f.ops[w].results[0]]] == tensors[cond_arg] == tensors[body_arg] == edge_value
    # the i32 loop counter has no edge: its block arguments are the while result's
    (counter_arg,) = [v for o, r, i, v in f.rows("block_arg") if o == w and r == 1 and i == 1]
    assert tensors[counter_arg] == vid[f.ops[w].results[1]]
    assert ("main", 0) not in {(fn, i) for fn, i, _ in f.rows("func_result_tensor")}
    (slot,) = [t for fn, i, t in f.rows("func_result_tensor") if fn == "f"]
    assert slot >= len(f.values)


# Edges on values that own none (Shardy's lit tests of sink-data-flow-edges
# and of the mesh passes have them): a while body's block argument, a function argument.
EDGES_ON_NON_OWNERS = """
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %r:2 = stablehlo.while(%x = %a, %i = %n) : tensor<4xf32>, tensor<i32>
   cond { %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1> }
   do { %e = sdy.data_flow_edge %x sharding=<@mesh, [{"x"}]> : tensor<4xf32>
        %y = stablehlo.add %e, %e : tensor<4xf32>
        stablehlo.return %y, %i : tensor<4xf32>, tensor<i32> }
  return %r#0 : tensor<4xf32>
}
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = sdy.data_flow_edge %a sharding=<@mesh, [{"x"}]> : tensor<4xf32>
  return %e : tensor<4xf32>
}"""


def test_an_edge_on_a_value_that_owns_none_has_its_input_as_source():
    f = extract_facts(parse_module(EDGES_ON_NON_OWNERS))
    edges = [(o, op) for o, op in enumerate(f.ops) if op.name == "sdy.data_flow_edge"]
    assert len(edges) == 2
    sources = f.rows("edge_source")
    for o, op in edges:
        assert [(i, v) for e, i, v in sources if e == o] == [(0, f.value_ids[op.operands[0]])]


def test_units_are_prime_sub_axes(facts):
    index = dict(facts.rows("chain_unit"))
    units = {(a, index[u], pre, size) for u, m, a, pre, size in facts.rows("axis_unit")}
    assert units == {("x", 0, 1, 2), ("x", 1, 2, 2), ("y", 0, 1, 2)}
    assert len({u for u, *_ in facts.rows("axis_unit")}) == 3


def test_every_relation_is_declared_once_with_its_arity(facts):
    decls = schema().relations
    files = facts_text(facts)
    assert set(files) == {f"{name}.facts" for name in schema().inputs}
    for name, rows in facts.relations.items():
        assert all(len(r) == decls[name].arity for r in rows), name


def test_unknown_mesh_is_an_error():
    with pytest.raises(SdylogError, match="unknown mesh|unknown"):
        extract_facts(parse_module("""
func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{}]>}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}"""))


def test_facts_command_writes_souffle_files(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    out = tmp_path / "facts"
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "facts", str(src), "-o", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (out / "mesh_axis.facts").read_text() == "mesh\tx\t0\t4\nmesh\ty\t1\t2\n"
    # the pipeline's run configuration comes along, for rules/propagation.dl
    assert "op_priorities\t1\n" in (out / "run_flag.facts").read_text()
    assert (out / "run_strategy.facts").read_text() == "0\taggressive\n"
    # the files load into the Datalog engine as Soufflé would read them
    prog = tmp_path / "q.dl"
    prog.write_text('#include "%s"\n.decl sharded_arg(f: symbol, i: number)\n'
                    'sharded_arg(f, i) :- func_arg(f, i, v), value_sharding(v, _).\n.output sharded_arg\n'
                    % schema().files[0])
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "datalog", str(prog), "-F", str(out), "-D", "-"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "main\t0" in p.stdout


DYNAMIC = """
func.func @main(%a: tensor<8xf32>, %n: tensor<1xi32>) -> tensor<?xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  %1 = stablehlo.real_dynamic_slice %0, %n, %n, %n : (tensor<8xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
"""


def test_static_shapes_rejects_a_dynamic_result_at_its_op():
    module = parse_module(DYNAMIC)
    assert len(extract_facts(module).rows("op")) == 4   # the check is opt-in
    with pytest.raises(SdylogError, match=r"m.mlir:4:\d+: .*only supports ranked tensors with a static shape. "
                                          r"type: tensor<\?xf32>"):
        extract_facts(module, "m.mlir", static_shapes=True)


def test_nested_ops_rows_keep_the_recursive_order():
    # the reduce's body ops come right after the reduce, its own tail rows
    # (op_trait, op_rule) after theirs; the op after it follows them all
    f = extract_facts(parse_module("""
func.func @main(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
   reducer(%x: tensor<f32>, %y: tensor<f32>) {
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  %n = stablehlo.negate %r : tensor<4xf32>
  return %n : tensor<4xf32>
}"""))
    names = [row[1] for row in f.rows("op")]
    assert names == ["func.func", "stablehlo.constant", "stablehlo.reduce", "stablehlo.add", "stablehlo.return",
                     "stablehlo.negate", "func.return"]
    reduce_id, add_id, ret_id, neg_id = 2, 3, 4, 5
    assert [row for row in f.rows("op_in") if row[0] in (3, 4)] == [(3, 2, 0), (4, 2, 0)]
    assert [row[0] for row in f.rows("op_rule")] == [add_id, reduce_id, neg_id]
    result = {op: v for op, _, v in f.rows("op_result")}
    x, y = [row[3] for row in f.rows("block_arg") if row[0] == reduce_id]
    assert result[reduce_id] < x < y < result[add_id]   # body arguments get ids as the body starts
    assert f.rows("region_yield") == [(reduce_id, 0, 0, result[add_id])]
    assert (ret_id, 0, result[add_id]) in f.rows("op_operand")


def test_propagation_reports_an_unpropagatable_result_at_its_op():
    from sdylog.propagation.driver import PropagationOptions, propagate

    class Ctx:
        filename = "m.mlir"
    with pytest.raises(SdylogError, match=r"m.mlir:4:\d+: .*static shape. type: tensor<\?xf32>"):
        propagate(parse_module(DYNAMIC), PropagationOptions(), Ctx())


def test_a_rule_known_by_key_gives_the_same_rows_as_building_it():
    # the walk writes a common op's tail rows itself once its rule key is
    # known; an op with a sharding or a user rule, or a data-flow edge met
    # before its result is read, goes the long way: the rows agree
    f = extract_facts(parse_module("""
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4x8xf32>
  %1 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<4x8xf32>
  %3 = stablehlo.add %0, %1 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=4, j=8}>} : tensor<4x8xf32>
  %4 = stablehlo.dot_general %0, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %5 = stablehlo.dot_general %2, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %6 = stablehlo.dot_general %3, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %10 = stablehlo.broadcast_in_dim %8, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %10 : tensor<4x4xf32>
}"""))
    rule_of = dict(f.rows("op_rule"))
    adds, dots, (t0, t1), (b0, b1) = [[row[0] for row in f.rows("op") if row[1] == f"stablehlo.{n}"]
                                      for n in ("add", "dot_general", "transpose", "broadcast_in_dim")]
    assert rule_of[adds[0]] == rule_of[adds[1]] == rule_of[adds[2]] == rule_of[adds[3]]   # the user rule equals it
    assert rule_of[dots[0]] == rule_of[dots[1]] == rule_of[dots[2]]
    assert rule_of[t0] == rule_of[t1] and rule_of[b0] != rule_of[b1]   # attributes count
    assert f.sharded_ops == {adds[1]}
    assert {op for op, _ in f.rows("op_trait")} == set(adds)
    derived = rule_tensors(f)
    for op in rule_of:   # each ruled op's tensors: its operands, then its results
        operands = [v for o, _, v in sorted(f.rows("op_operand")) if o == op]
        results = [v for o, _, v in sorted(f.rows("op_result")) if o == op]
        assert [(v, r) for o, _, v, r in derived if o == op] == \
            [(v, 0) for v in operands] + [(v, 1) for v in results]
    values = {row[0]: row[1:] for row in f.rows("value")}
    assert values[results[0]] == ("f", 2, "f32") and len(values) == len(f.values) == 2 + 11
    assert sorted(r[1:] for r in f.rows_per_value("type_dim") if r[0] == results[0]) == [(0, 4), (1, 4)]


def test_results_met_before_their_op_keep_their_ids():
    # the while's results are read at the while; the edge's result (its
    # tensor) gets an id then, before the walk reaches the edge
    f = extract_facts(parse_module(WHILE))
    ops = {row[1]: row[0] for row in f.rows("op")}
    edge_value = f.value_ids[f.ops[ops["sdy.data_flow_edge"]].results[0]]
    assert [v for o, _, v in f.rows("op_result") if o == ops["sdy.data_flow_edge"]] == [edge_value]
    assert sorted(r[0] for r in f.rows("value")) == list(range(len(f.values)))
    # values after the edge's result continue the numbering
    (ret,) = [v for o, _, v in f.rows("op_operand") if o == ops["func.return"]]
    assert ret == edge_value


def test_ops_give_the_rows_the_ir_has():
    # ops of one name with different result counts, and an op with a
    # variable number of regions (the walk asks for regions only when the
    # op's definition allows some), keep the IR's rows
    f = extract_facts(parse_module("""
func.func @f(%a: tensor<4xf32>, %p: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @foo(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @foo(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2:2 = stablehlo.custom_call @foo(%1) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  stablehlo.custom_call @foo(%2#1) : (tensor<4xf32>) -> ()
  %3 = stablehlo.custom_call @foo(%2#0) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = "stablehlo.case"(%p) ({
    stablehlo.return %3 : tensor<4xf32>
  }, {
    %n = stablehlo.negate %3 : tensor<4xf32>
    stablehlo.return %n : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %5 = stablehlo.negate %4 : tensor<4xf32>
  return %5 : tensor<4xf32>
}"""))
    rows = f.rows("op_result")
    for op_id, op in enumerate(f.ops):
        assert [r for r in rows if r[0] == op_id] == [(op_id, i, f.value_ids[v]) for i, v in enumerate(op.results)]
    assert [len(f.ops[op].results) for op, name, *_ in f.rows("op") if name == "stablehlo.custom_call"] == \
        [1, 1, 2, 0, 1]
    (case,) = [row[0] for row in f.rows("op") if row[1] == "stablehlo.case"]
    kinds = {row[0]: row[1] for row in f.rows("op")}
    nested = [(kinds[o], region) for o, parent, region in f.rows("op_in") if parent == case]
    assert nested == [("stablehlo.return", 0), ("stablehlo.negate", 1), ("stablehlo.return", 1)]
    negate = [row[0] for row in f.rows("op") if row[1] == "stablehlo.negate"]
    result = {op: v for op, _, v in rows}
    assert f.rows("region_yield") == [(case, 0, 0, result[case - 1]), (case, 1, 0, result[negate[0]])]
    assert sorted(r[0] for r in f.rows("value")) == list(range(len(f.values)))
    # value_ops (the write-back's plain ops): each one result's op, -1 for the other values
    one_result = {f.value_ids[op.results[0]]: op_id for op_id, op in enumerate(f.ops) if len(op.results) == 1}
    assert f.value_ops == [one_result.get(v, -1) for v in range(len(f.values))]


def test_region_ops_and_ops_with_sdy_attributes_share_rules():
    # a region op's tail rows come after its body's; an op with sdy
    # attributes (a sharding, or any other) has the key of one without: all
    # equal reduces and dots share one rule each, with the same tensor rows
    f = extract_facts(parse_module("""
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %r1 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %r2 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %d0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %d1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.note = "kept"} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %d2 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %s = stablehlo.add %r0, %r1 : tensor<4xf32>
  return %s : tensor<4xf32>
}"""))
    rule_of = dict(f.rows("op_rule"))
    reduces, dots, returns = [[row[0] for row in f.rows("op") if row[1] == n]
                              for n in ("stablehlo.reduce", "stablehlo.dot_general", "stablehlo.return")]
    assert len({rule_of[r] for r in reduces}) == 1 and len({rule_of[d] for d in dots}) == 1
    assert not set(returns) & set(rule_of)   # terminators have no rule
    assert f.sharded_ops == {reduces[2]}
    # each reduce's rows come after its body's (its return's), in op order
    assert [op for op, _ in f.rows("op_rule") if op in reduces] == reduces
    derived = rule_tensors(f)
    for op in rule_of:
        operands = [v for o, _, v in sorted(f.rows("op_operand")) if o == op]
        results = [v for o, _, v in sorted(f.rows("op_result")) if o == op]
        assert [(v, r) for o, _, v, r in derived if o == op] == \
            [(v, 0) for v in operands] + [(v, 1) for v in results]
        assert [(v, t) for v, t in f.rows("value_tensor") if v in results] == [(v, v) for v in results]


def test_operands_give_the_rows_the_ir_has():
    # none, one, two, or more operands, and one with no id yet when its
    # user is read (here the while's block argument is met before its op's
    # results)
    f = extract_facts(parse_module("""
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<12xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.negate %a : tensor<4xf32>
  %1 = stablehlo.add %0, %c : tensor<4xf32>
  %2 = stablehlo.concatenate %1, %b, %a, dim = 0 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<12xf32>
  return %2 : tensor<12xf32>
}""" + WHILE.replace("@f(", "@g(")))
    rows = sorted(f.rows("op_operand"))
    for op_id, op in enumerate(f.ops):
        assert [r for r in rows if r[0] == op_id] == [(op_id, i, f.value_ids[v]) for i, v in enumerate(op.operands)]
    counts = {name: len(f.ops[op].operands) for op, name, *_ in f.rows("op")}
    assert [counts[n] for n in ("stablehlo.constant", "stablehlo.negate", "stablehlo.add",
                                "stablehlo.concatenate")] == [0, 1, 2, 3]


def test_equal_shardings_share_one_id_and_one_set_of_rows():
    # function arguments and results (and, after propagation, op results)
    # repeat the same shardings: each distinct one is read once and has one
    # id and one set of rows, which every value carrying it names
    f = extract_facts(parse_module("""
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %c: tensor<4x4xf32>,
                %d: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<4x4xf32>,
        tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %a, %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x4xf32>
  %1 = stablehlo.add %a, %d {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x4xf32>
  return %a, %c, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}"""))
    args = {i: v for _, i, v in f.rows("func_arg")}
    sharding_of = dict(f.rows("value_sharding"))
    results = {i: s for _, i, s in f.rows("func_result_sharding")}
    x, y = sharding_of[args[0]], sharding_of[args[3]]
    assert x != y and sharding_of[args[1]] == x and args[2] not in sharding_of
    assert results == {0: x, 2: x}
    ops = {o: v for o, i, v in f.rows("op_result")}
    assert sorted(sharding_of[v] for v in ops.values()) == sorted([x, y])
    assert len(f.rows("sharding")) == 2 and len(f.shardings) == 2
    axes = {s: [r[1:] for r in f.rows("sharding_dim_axis") if r[0] == s] for s in (x, y)}
    assert axes[x] == [(0, 0, "x", 1, 2)] and axes[y] == [(1, 0, "y", 1, 2)]


def test_census_names_give_the_rows_of_a_walk_and_rows_share_their_ints():
    # A pipeline's census hands the facts its ops and names (names_within); the
    # rows are those of extract_facts' own walk, byte for byte, functions and
    # regions included (each function's values are one run of ids).
    from sdylog.passes.census import Census
    for text in (MODULE, WHILE):
        module = parse_module(text)
        walked = extract_facts(module, "m.mlir")
        shared = extract_facts(module, "m.mlir", names_within=Census.of(module).within_and_names)
        assert facts_text(shared) == facts_text(walked)
    value_rows = walked.rows("value")
    assert [row[0] for row in value_rows] == list(range(len(walked.values)))
    # main's arguments a, b and results %0 %1 %2, then relu's argument x and results %c %m
    assert [row[1] for row in extract_facts(parse_module(MODULE)).rows("value")] == ["main"] * 5 + ["relu"] * 3
    # (a value's id in its value and value_type rows is the very int value_ids holds)
    ids = {id(v) for v in walked.value_ids.values()}
    assert all(id(row[0]) in ids for row in value_rows + walked.rows("value_type"))


def test_prime_factors_and_divisors():
    """(By trial division up to the square root: a mesh axis of 2^31 - 1, a
    prime, takes 46341 steps, not 2^31.)"""
    import math

    from sdylog.facts.extract import divisors, prime_factors, prime_units
    for n in range(1, 600):
        assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]
        f = prime_factors(n)
        assert sorted(f) == f and all(divisors(p) == [1, p] for p in f) and math.prod(f) == n
    assert prime_factors(2 ** 31 - 1) == [2 ** 31 - 1] and prime_units(12) == [(1, 2), (2, 2), (4, 3)]


SHARDED_OPS = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} dense<0.0> : tensor<f32>
  %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x8xf32>
  %1 = stablehlo.add %0, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<4x8xf32>
  %2 = stablehlo.add %1, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x8xf32>
  %3 = stablehlo.add %2, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=4, j=8}>} : tensor<4x8xf32>
  %d0 = stablehlo.dot_general %3, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %d1 = stablehlo.dot_general %3, %b, contracting_dims = [1] x [0] {sdy.note = "kept", sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %d2 = stablehlo.dot_general %3, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %t = stablehlo.transpose %d1, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = stablehlo.add %t, %d0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>} : tensor<4x4xf32>
  %u = stablehlo.add %s, %d2 : tensor<4x4xf32>
  %r = stablehlo.reduce(%u init: %z) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
  %p:2 = stablehlo.custom_call @foo(%r) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>, <@mesh, [{}]>]>} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %p#1 : tensor<4xf32>
}"""


def test_sharded_ops_share_rules_and_shardings():
    # every op of a propagated module is sharded: its value_sharding rows
    # come from its list, equal lists share sharding ids, and ops of equal
    # rule keys share one rule (a user rule, or sdy attributes other than the
    # sharding, do not change that)
    f = extract_facts(parse_module(SHARDED_OPS))
    assert len(f.sharded_ops) == 11
    assert len({r for _, r in f.rows("op_rule")}) < len(f.rows("op_rule"))   # keys were met again
    values_with_sharding = [v for v, _ in f.rows("value_sharding")]
    assert len(values_with_sharding) == len(set(values_with_sharding)) == 12
    assert len(f.shardings) == len(set(f.shardings))


CASE_AND_CALLS = """
sdy.mesh @mesh = <["x"=2]>
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %p: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @foo(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1:2 = stablehlo.custom_call @foo(%0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2 = sdy.sharding_constraint %1#0 <@mesh, [{"x"}]> : tensor<4xf32>
  %3 = "stablehlo.case"(%p) ({
    stablehlo.return %2 : tensor<4xf32>
  }, {
    %n = stablehlo.negate %1#1 : tensor<4xf32>
    stablehlo.return %n : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  %4 = func.call @g(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = stablehlo.add %4, %4 : tensor<4xf32>
  return %5 : tensor<4xf32>
}"""


def _same_facts(fast, plain) -> None:
    names = {name for name, rows in fast.relations.items() if rows}
    assert names == {name for name, rows in plain.relations.items() if rows}
    for relation in names:
        assert fast.rows(relation) == plain.rows(relation), relation
    assert fast.value_ops == plain.value_ops and fast.sharded_ops == plain.sharded_ops
    assert fast.shardings == plain.shardings and fast.rules == plain.rules and fast.op_names == plain.op_names
    assert fast.tail_order == plain.tail_order   # (post_order and read_shardings follow it)


@pytest.mark.parametrize("text", [SHARDED_OPS, WHILE, CASE_AND_CALLS], ids=["sharded", "while", "case_calls"])
def test_the_walk_agrees_with_its_plain_reference(text):
    # add_body reads the common op inline; add_body_plain reads every op
    # the plain way (add_op_head, add_op_tail): every relation's rows agree,
    # in order, and the id maps
    _same_facts(extract_facts(parse_module(text)), extract_facts(parse_module(text), plain=True))


def test_the_walk_agrees_with_its_plain_reference_on_the_corpus():
    # propagated models (every op sharded), with while loops, calls, manual computations
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
    from small_models import small_models
    from sdylog.passes.driver import optimize_text, parse_flags
    flags = parse_flags(["-sdy-propagation-pipeline"])
    for path in small_models():
        text = optimize_text(path.read_text(), str(path), flags)
        _same_facts(extract_facts(parse_module(text), static_shapes=True),
                    extract_facts(parse_module(text), static_shapes=True, plain=True))


def test_rereading_shardings_does_not_give_new_ids():
    # read_shardings shares the facts' value ids: a value they do not know
    # (here a named computation's block argument, left out) is an error,
    # not a new id in the facts it was given
    from dataclasses import replace

    from sdylog.facts.extract import read_shardings
    module = parse_module("""
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.named_computation<"f">(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] (%a: tensor<8xf32>) {
    %1 = stablehlo.negate %a : tensor<8xf32>
    sdy.return %1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""")
    facts = extract_facts(module)
    assert read_shardings(module, facts).relations["value_sharding"] == facts.relations["value_sharding"]
    named = {o for o, name, *_ in facts.rows("op") if name == "sdy.named_computation"}
    (arg,) = [v for o, _, _, v in facts.rows("block_arg") if o in named]
    value_ids = {value: vid for value, vid in facts.value_ids.items() if vid != arg}
    unknown = replace(facts, value_ids=value_ids, values=list(facts.values))
    with pytest.raises(ValueError, match="the facts do not know"):
        read_shardings(module, unknown)
    assert len(value_ids) == len(facts.value_ids) - 1 and len(unknown.values) == len(facts.values)


def test_tail_order_is_post_order():
    # facts.tail_order (the order the walk ends ops, read again by
    # read_shardings and post_order) is MLIR's post-order walk
    from sdylog.ir.walk import op_list
    for text in (WHILE, CASE_AND_CALLS, SHARDED_OPS):
        module = parse_module(text)
        with module.context:
            facts = extract_facts(module)
            walked = [op for top in module.body.operations for op in op_list(top, post_order=True)
                      if op.name not in ("sdy.mesh",)]
            assert len(walked) == len(facts.tail_order)
            for o, op in zip(facts.tail_order, walked):
                assert facts.ops[o] == op


def test_rereading_shardings_reads_indexes_not_row_order():
    # read_shardings pairs each function argument and op result with its
    # sharding by the index column: with those rows in another order (as
    # facts read back from a file or a database may be), it reads the same
    from dataclasses import replace

    from sdylog.facts.extract import read_shardings
    module = parse_module("""
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
""")
    facts = extract_facts(module)
    relations = dict(facts.relations)
    for name in ("func_arg", "op_result"):
        relations[name] = list(reversed(relations[name]))
    reversed_rows = replace(facts, relations=relations)
    want = read_shardings(module, facts)
    got = read_shardings(module, reversed_rows)
    assert sorted(got.rows("value_sharding")) == sorted(want.rows("value_sharding"))
    assert got.shardings == want.shardings
