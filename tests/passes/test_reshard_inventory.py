"""What the reshard rules say for people (rules/reshard/inventory.dl,
reshard_costs.dl, why.dl): every op the full version inserts with its bytes
per device, and the reasons behind it. sdylog run / query / explain read
these (sdylog/reshard/inventory.py)."""
import pytest

from sdylog.commands.pipeline import run_pipeline
from sdylog.ir import parse_module
from sdylog.passes import PassContext
from sdylog.passes.pipelines import PartitionerOptions
from sdylog.reshard.inventory import needed_inventory

# The contracting dimension is sharded on "y" in one operand and on "x" in
# the other; the result keeps "y" on its columns.
CONFLICT = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x32xf32>) -> tensor<32x8xf32>
  return %1 : tensor<32x8xf32>
}
"""


def inventory(text):
    module = parse_module(text, "m.mlir")
    with module.context:
        return needed_inventory(module, PassContext(filename="m.mlir"))


def test_every_inserted_op_with_its_shardings_and_bytes():
    inv = inventory(CONFLICT)
    assert inv.error is None
    got = [(i.op, i.place, i.index, i.kind, i.from_sharding, i.to_sharding, i.axes, i.bytes_per_device)
           for i in inv.items]
    assert got == [
        # the greedy choice: contracting factor k takes "x", j keeps "y"; 8x16 f32 blocks of 2x8 and 4x16
        ("stablehlo.dot_general", "operand", 0, "reshard", '[{"x"}, {"y"}]', '[{}, {"x"}]', None, 160),
        ("stablehlo.dot_general", "operand", 1, "reshard", '[{"x"}, {}]', '[{"x"}, {"y"}]', None, 0),
        # partial sums over "x": 2 (g - 1) / g of the 8x16 f32 block, g = 4
        ("stablehlo.dot_general", "result", 0, "all_reduce", '[{}, {"y"}]', None, '{"x"}', 768),
        # the transpose's two tensors: the result, more sharded, is kept
        ("stablehlo.transpose", "operand", 0, "reshard", '[{}, {"y"}]', '[{}, {"x"}]', None, 256),
    ]
    assert [i.location for i in inv.items][-1] == "m.mlir:6:8"
    engine = inv.engine
    assert sorted(engine.read("needed_count")) == [("all_reduce", 1), ("reshard", 3)]
    assert sorted(engine.read("needed_kind_bytes")) == [("all_reduce", 768), ("reshard", 416)]
    assert engine.read("needed_total_bytes") == [(1184,)]


def test_the_reasons_behind_them():
    engine = inventory(CONFLICT).engine
    dot, transpose = 1, 2
    assert sorted(engine.read("why_route")) == [(dot, "greedy"), (transpose, "unary")]
    assert (dot, 2, "differs") in engine.read("why_conflict")
    # pick 1: factor k (2) = "x", held by operand 1 (512 elements) against "y" held by operand 0 (128);
    # pick 2: factor j (1) = "y", nothing else valid
    assert sorted((k, f, reason) for o, k, _c, f, reason in engine.read("why_pick") if o == dot) == \
        [(0, 2, "size"), (1, 1, "only")]
    assert sorted(r for r in engine.read("why_pick_axis") if r[0] == dot) == \
        [(dot, 0, 0, "x", 1, 4), (dot, 1, 0, "y", 1, 2)]
    assert (dot, 0, 512) in engine.read("why_pick_weight") and (dot, 0, 1) in engine.read("why_pick_covers")
    assert engine.read("why_kept") == [(transpose, 1, 0, "sharded")]


def test_a_module_shardy_rejects_says_why():
    single = """sdy.mesh @one = <[], device_ids=[0]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@one, []>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    inv = inventory(single)
    assert "function argument 0 cannot have a single-device (maximal) sharding attribute" in inv.error
    assert inv.items == []


# A value sharded on MESH_B's axis AXIS_B whose function result is on @a
# (as propagation leaves it: the meshes do not meet).
ONTO_A = """sdy.mesh @a = <["x"=2]>
sdy.mesh @b = MESH_B
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@b, [{"AXIS_B"}, {}]>})
    -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@a, RESULT>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@b, [{"AXIS_B"}, {}]>]>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""


def onto_a(mesh_b: str, axis_b: str, result: str) -> str:
    return ONTO_A.replace("MESH_B", mesh_b).replace("AXIS_B", axis_b).replace("RESULT", result)


def test_a_function_result_on_a_mesh_of_other_axes_is_not_costed():
    # no collectives move a value from "y" of @b to "x" of @a: the reshard
    # stays a sdy.reshard (as in Shardy), listed with its target mesh
    inv = inventory(onto_a('<["y"=2]>', "y", '[{"x"}, {}]'))
    assert inv.error is None
    assert [(i.op, i.place, i.kind, i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device)
            for i in inv.items] == [
        ("func.return", "use", "reshard", "b", '[{"y"}, {}]', '[{"x"}, {}]', "a", None)]
    assert inv.engine.read("needed_total_bytes") == [(0,)]


def test_a_function_result_on_a_mesh_of_another_device_order_pays_the_permute():
    # as the partitioned program does: a collective_permute onto @a's order
    # (the 2x4 f32 block, 32 B), then the all_to_all to dimension 1 (16 B)
    inv = inventory(onto_a('<["x"=2], device_ids=[1, 0]>', "x", '[{}, {"x"}]'))
    assert [(i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device) for i in inv.items] == [
        ("b", '[{"x"}, {}]', '[{}, {"x"}]', "a", 48)]


def test_a_fully_replicated_function_result_on_a_mesh_of_other_axes_is_gathered_on_the_values_mesh():
    # Shardy's reshard-to-collectives makes a fully replicated target the
    # value's sharding fully closed, on the value's mesh, before it compares
    # meshes: an all_gather over "y" of @b (the 2x4 f32 block, 32 B)
    for mesh_a in ('<["x"=2]>', "<[]>"):
        inv = inventory(onto_a('<["y"=2]>', "y", "[{}, {}]").replace('<["x"=2]>', mesh_a, 1))
        assert [(i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device) for i in inv.items] == [
            ("b", '[{"y"}, {}]', "[{}, {}]", None, 32)], mesh_a
        assert inv.engine.read("needed_cross_mesh") == []


def test_a_fully_replicated_function_result_on_a_mesh_of_another_device_order_needs_no_permute():
    inv = inventory(onto_a('<["x"=2], device_ids=[1, 0]>', "x", "[{}, {}]"))
    assert [(i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device) for i in inv.items] == [
        ("b", '[{"x"}, {}]', "[{}, {}]", None, 32)]
    assert inv.engine.read("needed_target_mesh") == []


# An add on @b (its operand 0's mesh, the most sharded) whose operand 1 is on
# @a, of another device order, with sharding OPERAND_1; the result (and the
# function's) RESULT.
ADD_ACROSS = """sdy.mesh @a = <["x"=2]>
sdy.mesh @b = <["x"=2], device_ids=[1, 0]>
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}, {}]>},
                %arg1: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@a, OPERAND_1>})
    -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<RESULT>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@b, [{"x"}, {}]>]>} : tensor<4x4xf32>
  %1 = stablehlo.add %0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<RESULT>]>} : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
"""


def add_across(operand_1: str, result: str) -> str:
    return ADD_ACROSS.replace("OPERAND_1", operand_1).replace("RESULT", result)


def test_a_replicated_operand_on_a_mesh_of_another_device_order_pays_the_permute():
    # Shardy slices it on @a (0 B), then permutes the 2x4 f32 block onto @b's order (32 B)
    inv = inventory(add_across("[{}, {}]", '@a, [{}, {}]'))
    assert [(i.place, i.index, i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device)
            for i in inv.items] == [
        ("operand", 1, "a", "[{}, {}]", '[{"x"}, {}]', "b", 32),
        ("result", 0, "b", '[{"x"}, {}]', "[{}, {}]", None, 32)]


def test_a_result_sharded_on_a_mesh_of_another_device_order_pays_the_permute():
    # worked on @b, the result goes back to @a's order: a collective_permute of the 2x4 block
    inv = inventory(add_across('[{"x"}, {}]', '@a, [{"x"}, {}]').replace("@a, [{", "@b, [{", 1))
    assert [(i.place, i.mesh, i.from_sharding, i.to_sharding, i.to_mesh, i.bytes_per_device)
            for i in inv.items] == [("result", "b", '[{"x"}, {}]', '[{"x"}, {}]', "a", 32)]


# ---------------------------------------------------------------- against the partitioned program
# A value on @b (sharding SOURCE) taken to a target on @a (TARGET) at a use:
# a function result, an optimization_barrier's or a while's data-flow edge,
# a call operand (written by the export step itself).
VALUE_ON_B = """sdy.mesh @a = MESH_A
sdy.mesh @b = MESH_B
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@b, SOURCE>}) -> RESULT {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@b, SOURCE>]>} : tensor<4x4xf32>
"""
USES = {
    "return": """  return %0 : tensor<4x4xf32>
}
""",
    "barrier": """  %1 = "stablehlo.optimization_barrier"(%0) {sdy.sharding = #sdy.sharding_per_value<[<@a, TARGET>]>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
""",
    "while": """  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%iterArg = %0, %i = %c) : tensor<4x4xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@a, TARGET>, <@a, []>]>}
    cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %c1 : tensor<i32>
    %a = stablehlo.abs %iterArg : tensor<4x4xf32>
    stablehlo.return %a, %n : tensor<4x4xf32>, tensor<i32>
  }
  return %1#0 : tensor<4x4xf32>
}
""",
    "call": """  %1 = func.call @f(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
func.func private @f(%x: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@a, TARGET>}) -> tensor<4x4xf32> {
  %0 = stablehlo.abs %x : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
""",
}
OTHER_AXES, OTHER_ORDER = '<["y"=2]>', '<["x"=2], device_ids=[1, 0]>'


def value_on_b(use: str, mesh_a: str, mesh_b: str, source: str, target: str) -> str:
    result = ("(tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@a, TARGET>})" if use == "return"
              else "tensor<4x4xf32>")
    return ((VALUE_ON_B + USES[use]).replace("RESULT", result).replace("MESH_A", mesh_a)
            .replace("MESH_B", mesh_b).replace("SOURCE", source).replace("TARGET", target))


CROSS_MESH = {
    **{f"{use} {name}": value_on_b(use, '<["x"=2]>', mesh, source, target)
       for use in USES
       for name, mesh, source, target in [
           ("other axes, replicated", OTHER_AXES, '[{"y"}, {}]', "[{}, {}]"),
           ("other order, replicated", OTHER_ORDER, '[{"x"}, {}]', "[{}, {}]"),
           ("other order, sharded", OTHER_ORDER, '[{"x"}, {}]', '[{}, {"x"}]')]},
    "return empty mesh": value_on_b("return", "<[]>", OTHER_AXES, '[{"y"}, {}]', "[{}, {}]"),
    "barrier other order, from replicated": value_on_b("barrier", '<["x"=2]>', OTHER_ORDER, "[{}, {}]",
                                                       '[{"x"}, {}]'),
    "operand other order, replicated": add_across("[{}, {}]", "@a, [{}, {}]"),
    "operand other order, sharded": add_across('[{"x"}, {}]', "@b, [{}, {}]"),
    # (operand 1 sharded on the contracting dimension: its working sharding is fully replicated)
    "operand other order, to replicated": """sdy.mesh @a = <["x"=2]>
sdy.mesh @b = <["x"=2], device_ids=[1, 0]>
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@b, [{"x"}, {}]>},
                %arg1: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@a, [{"x"}, {}]>}) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@b, [{"x"}, {}]>]>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
""",
    "result other order": add_across('[{"x"}, {}]', '@a, [{"x"}, {}]').replace("@a, [{", "@b, [{", 1),
}


@pytest.mark.parametrize("case", sorted(CROSS_MESH))
def test_the_bytes_across_meshes_are_those_of_the_partitioned_program(case):
    # what `sdylog run` reports (reshards and collectives, costed) against
    # what `sdylog run --partition` makes
    text = CROSS_MESH[case]
    needed = run_pipeline("m.mlir", text=text, reshards=True).needed
    assert needed.uncosted() == 0
    partitioned = run_pipeline("m.mlir", text=text, partition=PartitionerOptions()).collectives
    assert partitioned, "every case moves data"
    assert sum(i.bytes_per_device for i in needed.items) == sum(c["bytes_per_device"] for c in partitioned)
