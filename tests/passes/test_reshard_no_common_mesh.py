"""An op left without a common mesh (rules/reshard/errors.dl, no_common_mesh):
the reshard rules find the StableHLO ops with a sharding rule whose tensors
are on meshes of different axes and a dimension that needs a reshard;
insert-explicit-reshards writes the module as it is and
convert-global-to-local reports the error (tests/simulate/test_simulate_cli.py
runs whole programs)."""
from __future__ import annotations

from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir import parse_module
from sdylog.reshard.driver import ReshardOptions, evaluate, no_common_mesh_error, reshard_program, run_facts

MESHES = """sdy.mesh @mesh_a = <["x"=4]>
sdy.mesh @mesh_b = <["x"=2, "y"=2]>
sdy.mesh @mesh_e = <["x"=2, "y"=2]>
sdy.mesh @mesh_r = <["x"=4], device_ids=[3, 2, 1, 0]>
"""


def _dot(lhs: str, rhs: str, result: str | None = None) -> str:
    attr = "" if result is None else f" {{sdy.sharding = #sdy.sharding_per_value<[{result}]>}}"
    return MESHES + f"""func.func @main(%a: tensor<8x16xf32> {{sdy.sharding = #sdy.sharding{lhs}}},
                %b: tensor<16x4xf32> {{sdy.sharding = #sdy.sharding{rhs}}}) -> tensor<8x4xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]{attr} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}}"""


def _decide(text: str, full: bool = False):
    module = parse_module(text)
    return evaluate(reshard_program(), module, None, lambda facts: run_facts(ReshardOptions(full_version=full), facts))


def _refused(text: str, full: bool = False) -> list[tuple]:
    """(op kind, tensor, dimension, meshes in order) of each op refused."""
    decisions = _decide(text, full)
    engine, facts = decisions.engine, decisions.facts
    meshes = sorted(engine.select("no_common_mesh_mesh", "o", "j", "m"))
    return [(facts.ops[o].name, j, d, [m for o2, _, m in meshes if o2 == o])
            for o, j, d in sorted(engine.select("no_common_mesh", "o", "j", "d"))]


def test_contraction_split_on_two_meshes_is_refused():
    text = _dot('<@mesh_a, [{}, {"x"}]>', '<@mesh_b, [{"x", "y"}, {}]>')
    for full in (False, True):
        assert _refused(text, full) == [("stablehlo.dot_general", 0, 1, ["mesh_a", "mesh_b"])]


def test_first_dimension_needing_a_reshard():
    # (factor i is sharded on lhs only, factor j on rhs only: lhs's dim 0 comes first)
    assert _refused(_dot('<@mesh_a, [{"x"}, {}]>', '<@mesh_b, [{}, {"y"}]>')) == \
        [("stablehlo.dot_general", 0, 0, ["mesh_a", "mesh_b"])]


def test_replicated_operand_on_another_mesh_needs_no_reshard():
    assert _refused(_dot('<@mesh_a, [{"x"}, {}]>', '<@mesh_b, [{}, {}]>', '<@mesh_a, [{"x"}, {}]>')) == []


def test_equal_meshes_of_other_names_hold_a_factor_alike():
    """Factor i on lhs (@mesh_b) and the result (@mesh_e, the same mesh):
    no reshard, though rhs is on a mesh of other axes; on @mesh_a's other
    axes for the result it is one."""
    assert _refused(_dot('<@mesh_b, [{"x"}, {}]>', '<@mesh_a, [{}, {}]>', '<@mesh_e, [{"x"}, {}]>')) == []
    assert _refused(_dot('<@mesh_b, [{"x"}, {}]>', '<@mesh_a, [{}, {}]>', '<@mesh_a, [{"x"}, {}]>')) == \
        [("stablehlo.dot_general", 0, 0, ["mesh_b", "mesh_a"])]


def test_meshes_of_the_same_axes_have_a_common_mesh():
    assert _refused(_dot('<@mesh_a, [{}, {"x"}]>', '<@mesh_r, [{"x"}, {}]>')) == []


def test_values_on_two_meshes_through_a_while():
    text = MESHES + """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_b, [{"x", "y"}, {}]>}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0:2 = "stablehlo.optimization_barrier"(%a, %b) : (tensor<8x16xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xf32>
}"""
    assert _refused(text) == []


def test_error_names_inline_meshes_as_sdy_prints_them():
    text = _dot('<@mesh_a, [{}, {"x"}]>', '<mesh<["x"=2, "y"=2]>, [{"x", "y"}, {}]>')
    error = no_common_mesh_error(_decide(text), "t.mlir")
    assert str(error) == ("t.mlir:7:8: error: 'stablehlo.dot_general' op has sharded tensors on meshes with "
                          'different axes (@mesh_a, mesh<["x"=2, "y"=2]>): insert-explicit-reshards leaves such '
                          "an op as it is, so it has no per-device program (dimension 1 of operand 0 needs a "
                          "reshard; reshard its operands onto one mesh first)")
    assert no_common_mesh_error(_decide(_dot('<@mesh_a, [{"x"}, {}]>', '<@mesh_b, [{}, {}]>',
                                             '<@mesh_a, [{"x"}, {}]>')), "t.mlir") is None


def test_insert_writes_the_module_convert_reports(tmp_path):
    path = tmp_path / "t.mlir"
    path.write_text(_dot('<@mesh_a, [{}, {"x"}]>', '<@mesh_b, [{"x", "y"}, {}]>'))
    r = CliRunner().invoke(main, ["opt", str(path), "-sdy-insert-explicit-reshards"])
    assert r.exit_code == 0, r.output
    assert "stablehlo.dot_general" in r.output
    r = CliRunner().invoke(main, ["opt", str(path), "-sdy-insert-explicit-reshards", "-sdy-convert-global-to-local"])
    assert r.exit_code == 1
    assert r.output.startswith(f"{path}:7:8: error: 'stablehlo.dot_general' op has sharded tensors on meshes")
    assert "stablehlo.dot_general" not in r.output.split("error:", 1)[1].split("\n", 1)[1]
