"""`sdylog explain`: derivations of real propagation runs on small modules of our own."""
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sdylog.commands.explain import (ChainWalker, Explained, Hop, Namer, Origin, explain, explain_text, held_rows,
                                     partitioning_text, propagation_text, run_with_provenance)
from sdylog.commands.values import name_ranges, parse_spec, resolve
from sdylog.ir.diagnostics import SdylogError

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'

# %arg0's "a" goes negate -> transpose (dim 0 -> dim 1) -> exponential.
CHAIN = MESH + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<16x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x16xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %2 = stablehlo.exponential %1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}
"""

# dim 0 from a p1 annotation (round p1), dim 1 from a p0 one (round p0).
PRIORITIES = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p1, {?}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b"}p0]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""

# p0's "b" wins dim 0 of the add's operands before p1's "a" may move.
PRIORITY_CONFLICT = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {?}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}p0, {?}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""

# The loop-carried value takes "a" through the while's data-flow edge and "b" from the body's add.
WHILE = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> tensor<8x8xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i32>
    cond {
      %c_1 = stablehlo.constant dense<4> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_0, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = stablehlo.add %iterArg, %arg1 : tensor<8x8xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg_0, %c_1 : tensor<i32>
      stablehlo.return %2, %3 : tensor<8x8xf32>, tensor<i32>
    }
  %1 = stablehlo.negate %0#0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""

# dim 1 of %2 gets nothing: %arg1's dimension 1 is closed and empty.
STOPPED = MESH + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %2 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
"""

# "a" and "b" meet in the add at the same time: nothing goes through.
CONFLICT = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


def write(tmp_path, text, name="m.mlir"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run_explain(*args):
    result = CliRunner().invoke(explain, list(args))
    return result.exit_code, result.stdout, result.stderr


def partitioning(out: str) -> list[str]:
    """explain's lines from "partitioning it" on: the rest of that line
    (the section's heading), then its lines ([] when it has none)."""
    return out.split("partitioning it", 1)[1].splitlines() if "partitioning it" in out else []


def chain_of(path, value, dim):
    """The hops and origin of the first unit of `value`'s dimension `dim`."""
    ex = run_with_provenance(path)
    namer = Namer(ex)
    (target,) = resolve(parse_spec(value), ex.values, ex.funcs, ex.result_counts)
    vid = ex.copies[id(target.value)][0]
    (t,) = [t for v, t in ex.engine.scan("tensor_of") if v == vid]
    rows = sorted((r for r in held_rows(namer.rel, t) if r.d == dim), key=lambda r: (r.dp, r.u))
    return namer, ChainWalker(ex, namer).chain(rows[0])


def test_chain_through_several_ops(tmp_path):
    path = write(tmp_path, CHAIN)
    namer, chain = chain_of(path, "%2", 1)
    hops, origin = chain[:-1], chain[-1]
    assert all(isinstance(h, Hop) for h in hops) and isinstance(origin, Origin)
    assert [(namer.tensor(h.tensor), h.dim, namer.ex.facts.ops[h.op].name, namer.tensor(h.src[0]), h.src[1])
            for h in hops] == [("%2", 1, "stablehlo.exponential", "%1", 1),
                               ("%1", 1, "stablehlo.transpose", "%0", 0),
                               ("%0", 0, "stablehlo.negate", "%arg0", 0)]
    assert namer.tensor(origin.tensor) == "%arg0" and namer.unit(origin.unit) == '"a"'

    code, out, _ = run_explain(path, "%2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f'@main:%2 (stablehlo.exponential at {path}:6:8) gets <@mesh, [{{}}, {{"a"}}]>'
    assert lines[1] == '  dim 0: no axis'
    steps = [l.strip() for l in lines if ' "a": ' in l]
    assert steps == [
        f'%2 dim 1 "a": factor j of stablehlo.exponential ({path}:6:8) from operand 0 %1 dim 1',
        f'%1 dim 1 "a": factor j of stablehlo.transpose ({path}:5:8) from operand 0 %0 dim 0',
        f'%0 dim 0 "a": factor i of stablehlo.negate ({path}:4:8) from operand 0 %arg0 dim 0',
        f'%arg0 dim 0 "a": user annotation on %arg0 (argument 0 of @main) at {path}:3:17 (no priority), '
        'closed dimension']
    # every hop names its phase and the rules that made it
    assert "[round p0, op-priority k=0, aggressive; core.dl:" in out
    assert "write, core.dl:" in out and "op_unit]" in out and "tensors.dl:" in out


def test_value_reached_from_two_annotations_with_user_priorities(tmp_path):
    path = write(tmp_path, PRIORITIES)
    code, out, _ = run_explain(path, "@main:%0")
    assert code == 0
    lines = [l.strip() for l in out.splitlines()]
    assert lines[0].endswith('gets <@mesh, [{"a"}, {"b"}]>')
    i0, i1 = lines.index('dim 0 "a":'), lines.index('dim 1 "b":')
    dim0, dim1 = lines[i0:i1], lines[i1:]
    assert dim0[1].startswith('%0 dim 0 "a": factor i of stablehlo.add')
    assert dim0[1].endswith("from operand 0 %arg0 dim 0")
    assert dim0[2].startswith("[round p1, op-priority k=")   # held back until p1's round
    assert "user annotation on %arg0 (argument 0 of @main)" in dim0[3] and "(priority p1)" in dim0[3]
    assert dim0[4].startswith("[from round p1;")
    assert dim1[1].endswith("from operand 1 %arg1 dim 1") and dim1[2].startswith("[round p0,")
    assert "user annotation on %arg1 (argument 1 of @main)" in dim1[3] and "(priority p0)" in dim1[3]


def test_an_earlier_priority_takes_the_dimension_first(tmp_path):
    path = write(tmp_path, PRIORITY_CONFLICT)
    namer, chain = chain_of(path, "%0", 0)
    assert [namer.tensor(h.tensor) for h in chain[:-1]] == ["%0", "%1"]
    assert namer.unit(chain[0].unit) == '"b"' and namer.phase(chain[0].phase).startswith("round p0,")
    assert "(priority p0)" in chain[-1].text
    _, out, _ = run_explain(path, "%arg0")
    assert 'gets <@mesh, [{"a"}, {}]>' in out and "(priority p1)" in out and "[from round p1;" in out
    _, out, _ = run_explain(path, "%0")   # p1's "a" meets "b" at the negate and stays out
    assert (f'(conflict at stablehlo.negate ({path}:5:8): %arg0 holds "a" in factor i where this tensor has "b": '
            "it does not go through)") in out


def test_data_flow_edge_of_a_while(tmp_path):
    path = write(tmp_path, WHILE)
    namer, chain = chain_of(path, "%1", 0)
    assert [namer.op(h.op).split(" (")[0] for h in chain[:-1]] == ["stablehlo.negate",
                                                                    "the data-flow edge of stablehlo.while"]
    assert namer.tensor(chain[1].tensor) == "%0#0/%iterArg"    # the while result and its block arguments
    assert namer.operand(chain[1].op, chain[1].src_j) == "edge source 0"
    assert namer.tensor(chain[-1].tensor) == "%arg0"
    namer, chain = chain_of(path, "%1", 1)   # "b" enters the loop-carried value from the body's add
    assert [namer.ex.facts.ops[h.op].name for h in chain[:-1]] == ["stablehlo.negate", "stablehlo.add"]
    assert namer.tensor(chain[-1].tensor) == "%arg1"
    code, out, _ = run_explain(path, "%1")
    assert code == 0 and 'gets <@mesh, [{"a"}, {"b"}]>' in out
    assert f"dim 0 of the data-flow edge of stablehlo.while ({path}:6:10) from edge source 0 %arg0 dim 0" in out
    # %2 names the compare of the condition and the add of the body (sibling regions)
    code, out, _ = run_explain(path, "%2")
    assert code == 0 and "names 2 values" in out
    assert "(stablehlo.compare at" in out and "is not sharded (a scalar: nothing to shard)" in out
    assert '(stablehlo.add at' in out and 'gets <@mesh, [{"a"}, {"b"}]>' in out


def test_why_a_dimension_got_nothing(tmp_path):
    path = write(tmp_path, STOPPED)
    code, out, _ = run_explain(path, "%1")
    assert code == 0
    lines = out.splitlines()
    i = lines.index("  dim 1: no axis")
    assert lines[i + 1] == (f"    2 hops away: %arg1 dim 1 is closed by its annotation (argument 1 of @main at "
                            f"{path}:4:17): no axis can be added to it")
    path = write(tmp_path, CONFLICT, "conflict.mlir")
    code, out, _ = run_explain(path, "%1")
    assert code == 0
    assert out.splitlines()[:3] == [
        f"@main:%1 (stablehlo.negate at {path}:6:8) is not sharded",
        "  dim 0: no axis",
        f'    1 hop away: factor i of stablehlo.add ({path}:5:8): conflicting axes (%arg0 has "a"; %arg1 has "b"): '
        "Shardy propagates nothing through a conflict"]


def test_func_result_and_argument_specs(tmp_path):
    path = write(tmp_path, CHAIN)
    code, out, _ = run_explain(path, "@main:result0")
    assert code == 0 and out.startswith('@main:result0 (result 0 of @main) gets <@mesh, [{}, {"a"}]>')
    assert "from the returned value %2 dim 1" in out
    code, out, _ = run_explain(path, "@main:arg0")
    assert code == 0 and out.startswith(f"@main:%arg0 (argument 0 of @main at {path}:3:17)")


def test_tree_prints_the_datalog_derivation(tmp_path):
    path = write(tmp_path, CHAIN)
    code, out, _ = run_explain(path, "%0", "--tree")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("// @main:%0: tensor 1 = %0")
    assert lines[1].startswith("unit_at(1, 0, 0, ") and "[rule " in lines[1] and "core.dl:" in lines[1]
    assert any(l.lstrip("│├└─ ").startswith("write(") for l in lines)
    assert any("init_unit(0, 0, 0, " in l for l in lines)
    assert any("value_sharding(0, 0)    [input]" in l for l in lines)   # the annotation, a fact
    assert lines[-2].startswith("// units: ") and '= "a"' in lines[-2]
    assert lines[-1] == "// tensors: 0 = %arg0, 1 = %0"
    # relations off the chain are shown --depth levels deep
    assert any("tensor_of(0, 0)    [rule " in l and l.endswith(", not expanded]") for l in lines)
    _, deeper, _ = run_explain(path, "%0", "--tree", "--depth", "2")
    assert "value_tensor(0, 0)    [input]" in deeper and "value_tensor(0, 0)" not in out


def test_bad_values_name_what_is_there(tmp_path):
    path = write(tmp_path, CHAIN)
    cases = {
        "%foo": "error: no value %foo in @main; values are %arg0, %0..%2",
        "@f:%0": "error: no function @f; functions are @main",
        "@main:result3": "error: @main has 1 result; results are result0",
        "main:%0": "error: cannot read the value 'main:%0'",
    }
    for spec, message in cases.items():
        code, out, err = run_explain(path, spec)
        assert code == 1 and out == "" and err.startswith(message), (spec, err)
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "explain", path, "%9"], capture_output=True, text=True)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.strip() == "error: no value %9 in @main; values are %arg0, %0..%2"


def test_the_units_a_tensor_starts_with_are_apart_from_written_ones(tmp_path):
    """%arg0 starts with "a" (init_unit, no writer); %0 holds it as the negate wrote it (unit_at)."""
    ex = run_with_provenance(write(tmp_path, CHAIN))
    namer = Namer(ex)
    started = [(r[0], r[1], r[2]) for r in ex.engine.scan("init_unit")]
    written = [(r[0], r[1], r[2]) for r in ex.engine.scan("unit_at")]
    assert started == [(0, 0, 0)] and (0, 0, 0) not in written and (1, 0, 0) in written
    assert [type(r).__name__ for r in held_rows(namer.rel, 0)] == ["init_unit"]
    assert [type(r).__name__ for r in held_rows(namer.rel, 1)] == ["unit_at"]


def test_name_ranges():
    assert name_ranges(["%arg0", "%arg1", "%arg3", "%0", "%1", "%cst", "%cst_0", "%cst_1", "%0#0", "%0#1"]) == \
        "%arg0..%arg1, %arg3, %0..%1, %cst, %cst_0..%cst_1, %0#0..%0#1"
    with pytest.raises(SdylogError):
        parse_spec("@main")


def test_premises_show_negations_and_constraints_with_their_values():
    from sdylog.datalog import make_engine, parse_program
    from sdylog.datalog.explain import explain as derivation
    prog = parse_program("""
.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z), !edge(z, x), y != z, z - x < 9.
""", "p.dl")
    with make_engine(prog, "memory", provenance=True) as e:
        e.load("edge", [(1, 2), (2, 3), (3, 4), (4, 5)])
        e.run()
        tree = derivation(e, "path", (1, 5)).format()
    assert "!edge(5, 1)" in tree and "5 - 1 < 9" in tree and "4 != 5" in tree


def test_every_premise_of_a_propagation_derivation_holds(tmp_path):
    """Premises found in memory are tuples of the database, older than their conclusion."""
    from sdylog.datalog.explain import derive, premise_finder
    ex = run_with_provenance(write(tmp_path, WHILE))
    finder = premise_finder(ex.engine)
    for row in ex.engine.scan("unit_at"):
        node = derive(finder, "unit_at", row)
        _, height = finder.origin("unit_at", row)
        for p in node.premises:
            if not isinstance(p, str):
                assert ex.engine.contains(p.relation, p.values)
                assert finder.origin(p.relation, p.values)[1] < height


def test_sub_axes_are_named(tmp_path):
    """"a"=4 splits over the reshape's two factors: each part is explained as a sub-axis."""
    path = write(tmp_path, 'sdy.mesh @mesh = <["a"=4, "b"=2]>\n' + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}]>}) -> tensor<2x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
""")
    code, out, _ = run_explain(path, "%0")
    assert code == 0
    lines = [l.strip() for l in out.splitlines()]
    assert lines[0].endswith('gets <@mesh, [{"a":(1)2}, {"a":(2)2, "b"}]>')
    assert [l for l in lines if l.startswith("dim ")] == ['dim 0 "a":(1)2:', 'dim 1 "a":(2)2:', 'dim 1 "b":']
    assert '%0 dim 1 "a":(2)2: factor j of stablehlo.reshape' in out and "from operand 0 %arg0 dim 0" in out
    code, out, _ = run_explain(path, "%0", "--tree")
    assert '// units: 0 = "a":(1)2, 1 = "a":(2)2, 2 = "b"' in out


# Named as MLIR prints it: the body of the (isolated) manual computation is numbered after %2.
MANUAL = MESH + """
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>]
      manual_axes={"a"} (%arg1: tensor<4x8xf32>) {
    %3 = stablehlo.abs %arg1 : tensor<4x8xf32>
    sdy.return %3 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.exponential %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
"""


def test_manual_computation_in_and_out_shardings(tmp_path):
    path = write(tmp_path, MANUAL)
    _, out, _ = run_explain(path, "%arg0")
    # the import copies the in_sharding onto %0 (its only use): the user's annotation, not %0's own
    assert (f'%0 dim 0 "a": user annotation: in_shardings of sdy.manual_computation at {path}:5:8 (operand 0), '
            "copied onto %0 by the import (sdy-apply-sharding-constraints)") in out
    assert (f'%arg0 dim 0 "a": factor i of stablehlo.negate ({path}:4:8) (into its operand 0) '
            "from result 0 %0 dim 0") in out
    _, out, _ = run_explain(path, "%2")
    assert f'%1 dim 0 "a": user annotation: out_shardings of sdy.manual_computation ({path}:5:8)' in out


CALLS = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = call @f(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @f(%arg1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_a_function_called_twice_is_explained_per_call(tmp_path):
    path = write(tmp_path, CALLS)
    code, out, _ = run_explain(path, "@f:%0")
    assert code == 0
    heads = [l for l in out.splitlines() if l.startswith("@f:%0")]
    assert heads == [f'@f:%0 (stablehlo.negate at {path}:11:8) [the copy in the call at {path}:6:8] '
                     'gets <@mesh, [{"a"}, {}]>',
                     f'@f:%0 (stablehlo.negate at {path}:11:8) [the copy in the call at {path}:7:8] '
                     'gets <@mesh, [{}, {"b"}]>']
    assert (f'@f:%arg0 dim 1 "b": dim 1 of the data-flow edge of sdy.named_computation ({path}:7:8) '
            "from edge source 0 %arg1 dim 1") in out
    code, out, _ = run_explain(path, "@f:result0")
    assert out == "@f:result0: propagation has no result slot for @f (only the main function's results have one)\n"


def test_a_constant_split_per_use_is_explained_per_copy(tmp_path):
    path = write(tmp_path, MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %cst = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %0 = stablehlo.add %arg0, %cst : tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %cst : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
""")
    _, out, _ = run_explain(path, "%cst")
    assert [l for l in out.splitlines() if l.startswith("@")] == [
        f'@main:%cst (stablehlo.constant at {path}:6:10) [the copy used by stablehlo.add at {path}:7:8] '
        'gets <@mesh, [{"a"}, {}]>',
        f'@main:%cst (stablehlo.constant at {path}:6:10) [the copy used by stablehlo.add at {path}:8:8] '
        'gets <@mesh, [{}, {"b"}]>']


def test_a_barrier_stops_the_other_direction(tmp_path):
    path = write(tmp_path, MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.propagation_barrier %0 allowed_direction=BACKWARD : tensor<8x8xf32>
  %2 = stablehlo.exponential %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
""")
    _, out, _ = run_explain(path, "%2")
    assert out.splitlines()[:3] == [
        f"@main:%2 (stablehlo.exponential at {path}:6:8) is not sharded", "  dim 0: no axis",
        f'    1 hop away: dim 0 of sdy.propagation_barrier ({path}:5:8): %0 has "a", but the barrier lets '
        "shardings through BACKWARD only"]


# A dot whose tensors shard "x" on different dimensions (golden/dot_conflicts).
DOT_CONFLICT = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%lhs: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %rhs: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, tensor<16x8xf32>) {
  %0 = stablehlo.dot %lhs, %rhs {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<16x8xf32>
}
"""


def test_explain_says_why_a_value_is_resharded(tmp_path):
    """The greedy picks of the dot with what made each win (rules/reshard/why.dl),
    the conflicting factors, the reshard of the operand with its bytes; the
    transpose keeps the more sharded side and reshards its result."""
    p = tmp_path / "d.mlir"
    p.write_text(DOT_CONFLICT)
    ex = run_with_provenance(str(p))
    text = explain_text(ex, "%arg0")
    tail = text[text.index("partitioning it"):].splitlines()
    assert tail[1].endswith('/d.mlir:5:8: stablehlo.dot operand 0: reshard [{"x"}, {"y"}] -> [{}, {"y"}], '
                            '48 B per device'), tail
    assert '    factor i (operand 0 dim 0, result 0 dim 0) conflicts: operand 0 {"x"}, result 0 {}' in tail
    assert ('    pick 1: factor j takes {"x"}: its tensors are the largest; tensors of 128 elements in all hold '
            'it so (result 0); a pass-through factor') in tail
    assert ('    pick 2: factor k takes {"y"}: no other candidate was valid; tensors of 96 elements in all hold '
            'it so (operand 0, operand 1); a reduction factor') in tail
    assert '    its operand 0 is resharded to the working sharding' in tail
    text = explain_text(ex, "%0")
    assert '/d.mlir:5:8: stablehlo.dot result 0: all_reduce {"y"} on [{}, {"x"}], 128 B per device' in text
    assert "    its sharded reduction factors make an all-reduce over {\"y\"} follow it" in text
    text = explain_text(ex, "%1")
    assert "    two tensors: operand 0 keeps its sharding, result 0 takes it (it is more sharded (4 shards against 2))" \
        in text
    assert '/d.mlir:6:8: stablehlo.transpose result 0: reshard [{"x"}, {}] -> [{}, {"y"}], 192 B per device' in text
    assert "    its result 0 is made with the working sharding and resharded back to what it carries" in text


# A function result declared otherwise than its value (golden/function_results).
RETURNED = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_explain_says_why_a_returned_value_is_resharded(tmp_path):
    p = tmp_path / "r.mlir"
    p.write_text(RETURNED)
    text = explain_text(run_with_provenance(str(p)), "%0")
    # an all-to-all over "x": half of the 128 B block leaves each device
    assert '/r.mlir:5:3: func.return use 0: reshard [{"x"}, {}] -> [{}, {"x"}], 64 B per device' in text, text
    assert ("  the function returns it (operand 0 of func.return), which asks for another sharding: a reshard "
            "(it is not equivalent to the target)") in text


def test_explain_shows_what_the_export_step_wrote():
    """golden/unreduced_values: the pipeline's export step writes the
    replicated_to_unreduced of a returned argument itself."""
    from pathlib import Path
    golden = Path(__file__).resolve().parents[2] / "golden"
    text = explain_text(run_with_provenance(str(golden / "unreduced_values.in.mlir")), "%arg2")
    assert ('unreduced_values.in.mlir:10:17: written by the export step: replicated_to_unreduced {"x"} on '
            '[{}, {}], 0 B per device') in text, text


def test_a_note_on_the_input_is_said_once(tmp_path):
    # (explain runs the pipeline twice: with provenance, then to partition)
    path = tmp_path / "g.mlir"
    path.write_text('module @m attributes {mhlo.num_partitions = 8 : i32} {\n'
                    '  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"})'
                    ' -> tensor<8x16xf32> {\n'
                    '    %0 = stablehlo.negate %arg0 : tensor<8x16xf32>\n'
                    '    return %0 : tensor<8x16xf32>\n  }\n}\n')
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "explain", str(path), "%0"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    notes = [line for line in p.stderr.splitlines() if ": note: " in line]
    assert len(notes) == 1 and "mhlo.sharding" in notes[0], p.stderr


# A data-flow edge on a function argument (Shardy's lit tests have some): it
# passes %arg0's "a" on to the negate.
EDGE_ON_AN_ARGUMENT = MESH + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x8xf32> {
  %0 = sdy.data_flow_edge %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


def test_an_edge_on_a_function_argument_is_named_as_one(tmp_path):
    path = write(tmp_path, EDGE_ON_AN_ARGUMENT)
    namer, chain = chain_of(path, "%1", 0)
    assert [namer.op(h.op) for h in chain[:-1]] == [f"stablehlo.negate ({path}:5:8)",
                                                    f"the data-flow edge on argument 0 of @main ({path}:3:1)"]


# An edge on a while body's block argument owns none either: it holds its own
# sharding, and passes it on to the add.
EDGE_ON_A_WHILE_BODY_ARGUMENT = MESH + """
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<i32>) -> tensor<8x8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %arg1) : tensor<8x8xf32>, tensor<i32>
    cond {
    %1 = stablehlo.compare  LT, %iterArg_1, %iterArg_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = sdy.data_flow_edge %iterArg sharding=<@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %2 = stablehlo.add %1, %1 : tensor<8x8xf32>
    stablehlo.return %2, %iterArg_1 : tensor<8x8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8x8xf32>
}
"""


def test_an_edge_on_a_while_body_argument_holds_its_own_sharding(tmp_path):
    path = write(tmp_path, EDGE_ON_A_WHILE_BODY_ARGUMENT)
    text = explain_text(run_with_provenance(str(path)), "%2")
    assert f"user annotation: sdy.sharding of sdy.data_flow_edge %1 at {path}:9:10" in text, text
    assert "sdy.sharding of stablehlo.while" not in text, text


# Every argument of every propagation regression explains (text and --tree):
# among them writes a priority restriction held back, made when it lifts
# (core.dl: write <- lift_offer <- prop).
REGRESSIONS = sorted(p for p in (Path(__file__).parents[1] / "propagation" / "regressions").glob("*.mlir")
                     if not p.name.endswith(".expected.mlir"))


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_every_argument_of_the_regressions_explains(path):
    # one run of what explain_file runs, explaining every argument (text and --tree)
    from sdylog.commands.pipeline import run_pipeline
    specs = []

    def explain_all(result, named):
        ex = Explained.of(result, named, str(path))
        specs.extend(sorted({f"@{v.func}:{v.name}" for v in ex.values if v.name.startswith("%arg")}))
        for spec in specs:
            assert propagation_text(ex, spec) and propagation_text(ex, spec, tree=True)
    run = run_pipeline(str(path), keep_values=True, provenance=True, on_propagated=explain_all)
    assert specs
    for spec in specs:
        partitioning_text(spec, run)


LIFT = MESH + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p0]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}p1]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def test_an_axis_taken_when_a_priority_restriction_lifts(tmp_path):
    # %arg1 (p1) refuses "a" in round p0 and takes it in round p1, from the same proposal
    path = write(tmp_path, LIFT)
    namer, chain = chain_of(path, "%arg1", 0)
    (hop, origin) = chain
    assert namer.tensor(hop.src.t) == "%arg0" and namer.tensor(origin.tensor) == "%arg0"
    assert [rel for rel, _ in hop.rules] == ["unit_at", "write", "lift_offer", "prop", "op_unit"]
    assert namer.round_of(hop.proposed) == "p0" and namer.round_of(hop.phase) == "p1"
    code, out, _ = run_explain(path, "%arg1")
    assert code == 0
    lines = [l.strip() for l in out.splitlines()]
    i = lines.index(f'%arg1 dim 0 "a": factor i of stablehlo.add ({path}:5:8) (into its operand 1) '
                    'from operand 0 %arg0 dim 0')
    assert lines[i + 1].startswith("(taken when the priority restriction on it lifted; proposed round p0")
    assert lines[i + 2].startswith("[round p1") and "lift_offer" in lines[i + 2]
    code, out, _ = run_explain(path, "%arg1", "--tree")
    assert code == 0
    assert any(l.lstrip("│├└─ ").startswith("lift_offer(") for l in out.splitlines())
    assert out.splitlines()[-1] == "// tensors: 0 = %arg0, 1 = %arg1"
