"""What the reshard rules say for people (rules/reshard/inventory.dl,
reshard_costs.dl, why.dl): every op the full version inserts with its bytes
per device, and the reasons behind it. sdylog run / query / explain read
these (sdylog/reshard/inventory.py)."""
from sdylog.ir import parse_module
from sdylog.passes import PassContext
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
