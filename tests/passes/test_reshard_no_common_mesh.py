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


# ---------------------------------------------------------------- whatever ran before convert

CROSS = _dot('<@mesh_a, [{}, {"x"}]>', '<@mesh_b, [{"x", "y"}, {}]>')
VALID = _dot('<@mesh_a, [{"x"}, {}]>', '<@mesh_b, [{}, {}]>', '<@mesh_a, [{"x"}, {}]>').replace(
    "-> tensor<8x4xf32> {", '-> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>}) {')
BARRIER = MESHES + """func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>},
                %b: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_b, [{"x", "y"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_a, [{"x"}, {}]>},
                                                                                      tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh_b, [{"x", "y"}, {}]>}) {
  %0:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh_a, [{"x"}, {}]>, <@mesh_b, [{"x", "y"}, {}]>]>} %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
  %1:2 = stablehlo.while(%iterArg = %0#0, %iterArg_0 = %0#1) : tensor<8x16xf32>, tensor<8x16xf32>
    attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh_a, [{"x"}, {}]>, <@mesh_b, [{"x", "y"}, {}]>]>}
    cond {
    %c = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %iterArg, %iterArg_0 : tensor<8x16xf32>, tensor<8x16xf32>
  }
  return %1#0, %1#1 : tensor<8x16xf32>, tensor<8x16xf32>
}"""
ERROR = ("error: 'stablehlo.dot_general' op has sharded tensors on meshes with different axes (@mesh_a, @mesh_b): "
         "insert-explicit-reshards leaves such an op as it is, so it has no per-device program (dimension 1 of "
         "operand 0 needs a reshard; reshard its operands onto one mesh first)")


def _opt(*args):
    return CliRunner().invoke(main, ["opt", *map(str, args)])


def test_convert_alone_on_a_saved_module_refuses(tmp_path):
    """A module saved after insert-explicit-reshards, converted in another
    run: the rules find the op on the module itself (as in one run); no
    output, an existing -o target untouched."""
    path, saved, out = tmp_path / "t.mlir", tmp_path / "saved.mlir", tmp_path / "out.mlir"
    path.write_text(CROSS)
    assert _opt(path, "-sdy-insert-explicit-reshards", "-o", saved).exit_code == 0
    r = _opt(saved, "-sdy-convert-global-to-local", "-o", out)
    assert r.exit_code == 1
    lines = saved.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "stablehlo.dot_general" in text)
    col = lines[line - 1].index("stablehlo.dot_general") + 1
    assert r.output.strip() == f"{saved}:{line}:{col}: {ERROR}"
    assert not out.exists()
    out.write_text("kept\n")
    assert _opt(saved, "-sdy-convert-global-to-local", "-o", out).exit_code == 1
    assert out.read_text() == "kept\n"
    # in one run: the same error, at the op of the input
    r = _opt(path, "-sdy-insert-explicit-reshards", "-sdy-convert-global-to-local")
    assert r.exit_code == 1 and r.output.strip() == f"{path}:7:8: {ERROR}"


def test_convert_alone_takes_two_meshes_through_a_barrier_and_a_while(tmp_path):
    path = tmp_path / "t.mlir"
    path.write_text(BARRIER)
    for passes in (["-sdy-convert-global-to-local"],
                   ["-sdy-insert-explicit-reshards", "-sdy-convert-global-to-local"]):
        r = _opt(path, *passes)
        assert r.exit_code == 0, r.output
        assert "tensor<2x16xf32>" in r.output and "tensor<8x16xf32>" not in r.output


def test_no_hand_over_leaks_across_chunks(tmp_path):
    """-split-input-file: each chunk's convert answers for its own module,
    whatever the insert pass found in the chunk before."""
    path = tmp_path / "t.mlir"
    path.write_text(VALID + "\n// -----\n" + CROSS)
    r = _opt(path, "-split-input-file", "-sdy-insert-explicit-reshards", "-sdy-convert-global-to-local")
    assert r.exit_code == 1
    assert r.output.strip() == f"{path}:{7 + VALID.count(chr(10)) + 2}:8: {ERROR}"
    r = _opt(path, "-split-input-file", "-sdy-convert-global-to-local")
    assert r.exit_code == 1 and r.output.strip().endswith(ERROR)


def _ctx():
    from sdylog.passes import PassContext
    return PassContext(filename="t.mlir")


def _run(name: str, module, ctx, **options):
    from sdylog.passes import lookup, parse_options
    from sdylog.passes.census import follow_step
    result = lookup(name).load()(module, {**parse_options(name, None), **options}, ctx)
    follow_step(ctx, result)


def test_a_stale_hand_over_is_not_taken():
    """One context, several modules and runs: convert takes the insert
    pass's finding only for the module it ran on, unchanged since."""
    from sdylog.passes.census import ATTRIBUTES_ONLY, follow_step, shared_census
    from sdylog.reshard.driver import no_common_mesh
    ctx = _ctx()
    valid, cross = parse_module(VALID), parse_module(CROSS)
    with shared_census(ctx):
        _run("sdy-insert-explicit-reshards", valid, ctx)
        assert ctx.no_common_mesh_hand_over is not None and ctx.no_common_mesh_hand_over.error is None
        assert str(no_common_mesh(cross, ctx)) == f"t.mlir:7:8: {ERROR}"   # (another module)
        _run("sdy-insert-explicit-reshards", cross, ctx)
        assert str(ctx.no_common_mesh_hand_over.error) == f"t.mlir:7:8: {ERROR}"
        assert no_common_mesh(valid, ctx) is None
        # the module edited since: the rules on it as it is
        func = cross.body.operations[len(cross.body.operations) - 1]
        with cross.context:
            from jaxlib.mlir import ir
            func.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.Attribute.parse(
                f"{{sdy.sharding = #sdy.sharding<@{m}, [{{}}, {{}}]>}}") for m in ("mesh_a", "mesh_b")])
        follow_step(ctx, ATTRIBUTES_ONLY)
        assert no_common_mesh(cross, ctx) is None
    # outside the scope (nothing tells of edits): the rules again
    ctx = _ctx()
    cross = parse_module(CROSS)
    _run("sdy-insert-explicit-reshards", cross, ctx)
    assert ctx.no_common_mesh_hand_over is None
    assert str(no_common_mesh(cross, ctx)) == f"t.mlir:7:8: {ERROR}"


def test_in_one_run_convert_takes_the_hand_over(monkeypatch):
    """Insert then convert in one scope: the insert pass's finding, the
    rules not evaluated again; it agrees with the rules' on the module."""
    from sdylog.passes.census import shared_census
    from sdylog.reshard import driver
    for text in (CROSS, VALID, BARRIER):
        ctx = _ctx()
        module = parse_module(text)
        with shared_census(ctx):
            _run("sdy-insert-explicit-reshards", module, ctx)
            reference = driver.no_common_mesh(module, _ctx())
            with monkeypatch.context() as m:
                m.setattr(driver, "evaluate", None)
                handed = driver.no_common_mesh(module, ctx)
        assert str(handed) == str(reference)


def test_partition_as_written_refuses(tmp_path):
    """simulate --as-written and partition_module(explicit=True) on a saved
    module: convert-global-to-local alone, the same refusal."""
    import pytest

    from sdylog.ir.diagnostics import SdylogError
    from sdylog.partition.pipeline import partition_module
    path, saved = tmp_path / "t.mlir", tmp_path / "saved.mlir"
    path.write_text(CROSS)
    assert _opt(path, "-sdy-insert-explicit-reshards", "-o", saved).exit_code == 0
    module = parse_module(saved.read_text(), "saved.mlir")
    with pytest.raises(SdylogError) as e:
        partition_module(module, _ctx(), explicit=True)
    assert str(e.value).endswith(ERROR)
    r = CliRunner().invoke(main, ["simulate", "--as-written", str(saved)])
    assert r.exit_code == 1 and ERROR in r.output


def _rules_alone(module) -> str | None:
    """The reference: the rules on the module, without the meshes' shortcut."""
    decisions = evaluate(reshard_program(), module, None, lambda facts: run_facts(ReshardOptions(), facts),
                         strict_rules=False)
    error = no_common_mesh_error(decisions, "t.mlir")
    return None if error is None else str(error)


def test_the_meshes_shortcut_agrees_with_the_rules():
    """no_common_mesh skips the rules on a module without two meshes of
    other axes in use (meshes_of_other_axes): on dots and adds over named,
    equal, permuted and inline meshes, sharded every way, the same answer
    as the rules alone."""
    import itertools

    from sdylog.passes.census import census
    from sdylog.reshard.driver import meshes_of_other_axes, no_common_mesh
    meshes = ["@mesh_a", "@mesh_b", "@mesh_e", "@mesh_r", 'mesh<["x"=2, "y"=2]>', 'mesh<["x"=4]>']
    lhs_dims = ['[{}, {}]', '[{"x"}, {}]', '[{}, {"x"}]']
    rhs_dims = ['[{}, {}]', '[{"x"}, {}]', '[{}, {"x"}]']
    seen = {True: 0, False: 0, "refused": 0}
    for (m1, m2), d1, d2 in itertools.product(itertools.product(meshes, repeat=2), lhs_dims, rhs_dims):
        for text in (_dot(f"<{m1}, {d1}>", f"<{m2}, {d2}>"),
                     _dot(f"<{m1}, {d1}>", f"<{m2}, {d2}>", f"<{m1}, {d1}>")):
            module = parse_module(text)
            gate = meshes_of_other_axes(module, census(module).all_ops())
            got = no_common_mesh(module, _ctx())
            want = _rules_alone(module)
            assert (None if got is None else str(got)) == want, text
            seen[gate] += 1
            seen["refused"] += want is not None
            assert gate or want is None
    assert min(seen.values()) > 20, seen


EDGE = '''sdy.mesh @a = <["x"=4]>
sdy.mesh @b = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@a, [{}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.optimization_barrier %arg1 : tensor<8x8xf32>
  %1 = sdy.data_flow_edge %0 sharding=<@b, [{"y", "x"}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.add %arg0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@a, [{}, {}]>]>} : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}'''


def test_convert_alone_sees_a_data_flow_edge_sharding(tmp_path):
    """The meshes shortcut reads the shardings the facts read, a data-flow
    edge's included: the add's operand is on @b only through its edge."""
    path = tmp_path / "t.mlir"
    path.write_text(EDGE)
    r = _opt(path, "-sdy-convert-global-to-local")
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"{path}:6:8: error: 'stablehlo.add' op has sharded tensors on meshes with "
                               "different axes (@a, @b)")


SINGLE_DEVICE = '''sdy.mesh @g = <["a"=2]>
sdy.mesh @b = <["y"=2]>
sdy.mesh @m = <[], device_ids=[0]>
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>}, %y: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>}) -> tensor<f32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}'''


def test_a_single_device_op_is_not_left_without_a_mesh():
    """insert-explicit-reshards brings a single-device op's operands to the
    global mesh and its result to the device (single_device.dl): it is no op
    left as it is, whatever mesh the global one is."""
    assert _refused(SINGLE_DEVICE) == []
    assert _refused(SINGLE_DEVICE, full=True) == []


# Generated inputs (rev31 a12_170, a12_218) where an op left on two meshes
# also has a dimension to pad: the padding pass padded around it apart and
# left an invalid global program ('stablehlo.add' op requires the same
# shape; in `opt`, an IndexError reading a padded reshape). The refusal now
# comes from the padding pass, before it writes anything.
PADDED_170 = """sdy.mesh @mesh = <["z"=4, "x"=2, "w"=2]>
sdy.mesh @mesh_1 = <["x"=2, "y"=4, "w"=2]>
func.func @main(%arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"y"}]>}, %arg2: tensor<2x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x"}, {?}, {}]>}, %arg3: tensor<8x8x8xf32>, %arg9: tensor<8x4xf32>, %arg14: tensor<8x2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z":(2)2}p0, {}, {?}p0]>}) -> (tensor<64x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}]>}, tensor<8x2x8xf32>, tensor<8x2x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "z":(1)2, ?}, {}, {"w", ?}]>}) {
  %c4 = stablehlo.constant dense<1.000000e+00> : tensor<8x8x8xf32>
  %v5 = stablehlo.add %arg3, %c4 : tensor<8x8x8xf32>
  %v6 = stablehlo.transpose %arg2, dims = [1, 0, 2] : (tensor<2x8x4xf32>) -> tensor<8x2x4xf32>
  %c7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v8 = stablehlo.reduce(%v5 init: %c7) applies stablehlo.add across dimensions = [0] : (tensor<8x8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %v10 = stablehlo.add %v6, %v6 : tensor<8x2x4xf32>
  %v11 = stablehlo.tanh %v5 : tensor<8x8x8xf32>
  %v12 = stablehlo.reshape %v11 : (tensor<8x8x8xf32>) -> tensor<64x8xf32>
  %v13 = stablehlo.broadcast_in_dim %v8, dims = [0, 2] : (tensor<8x8xf32>) -> tensor<8x2x8xf32>
  %v15 = stablehlo.add %arg14, %v10 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"z", ?}, {"w", "x"}]>]>} : tensor<8x2x4xf32>
  %v16 = sdy.sharding_constraint %v13 <@mesh, [{"x", ?}, {"w"}, {}]> : tensor<8x2x8xf32>
  %v17 = stablehlo.maximum %v16, %v16 : tensor<8x2x8xf32>
  %v18 = stablehlo.concatenate %arg14, %arg14, %v15, dim = 2 : (tensor<8x2x4xf32>, tensor<8x2x4xf32>, tensor<8x2x4xf32>) -> tensor<8x2x12xf32>
  return %v12, %v17, %v18 : tensor<64x8xf32>, tensor<8x2x8xf32>, tensor<8x2x12xf32>
}"""

PADDED_218 = """sdy.mesh @mesh = <["x"=8]>
sdy.mesh @mesh_1 = <["z"=2, "x"=8]>
func.func @main(%arg1: tensor<8x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}, %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg3: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8xf32>, tensor<8x8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {?}]>}, tensor<8x8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {?}]>}, tensor<64x2xf32>, tensor<8x2xf32>) {
  %v4 = stablehlo.optimization_barrier %arg2 : tensor<8xf32>
  %c5 = stablehlo.constant dense<1.000000e+00> : tensor<8x16x2xf32>
  %v6 = stablehlo.dot_general %arg1, %c5, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x8x16xf32>, tensor<8x16x2xf32>) -> tensor<8x8x2xf32>
  %v7 = stablehlo.add %arg2, %arg3 : tensor<8xf32>
  %v8 = stablehlo.broadcast_in_dim %v4, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x":(1)4}p1, {?}]>]>} : (tensor<8xf32>) -> tensor<8x2xf32>
  %v9 = stablehlo.maximum %v6, %v6 {sdy.sharding = #sdy.sharding_per_value<[<@mesh_1, [{}, {}, {}]>]>} : tensor<8x8x2xf32>
  %v10 = stablehlo.exponential %v6 : tensor<8x8x2xf32>
  %v11 = stablehlo.reshape %v9 : (tensor<8x8x2xf32>) -> tensor<64x2xf32>
  %v12 = stablehlo.reshape %v11 : (tensor<64x2xf32>) -> tensor<8x8x2xf32>
  %v13 = stablehlo.add %v8, %v8 : tensor<8x2xf32>
  %v14 = sdy.sharding_constraint %v11 <@mesh, [{}, {"x"}]> : tensor<64x2xf32>
  %v15 = stablehlo.reshape %v13 : (tensor<8x2xf32>) -> tensor<16xf32>
  %v16 = sdy.sharding_constraint %v13 <@mesh, [{}, {?}]> : tensor<8x2xf32>
  return %v7, %v10, %v12, %v14, %v16 : tensor<8xf32>, tensor<8x8x2xf32>, tensor<8x8x2xf32>, tensor<64x2xf32>, tensor<8x2xf32>
}"""


def test_op_on_two_meshes_is_refused_before_padding(tmp_path):
    path = tmp_path / "a.mlir"
    path.write_text(PADDED_170)
    r = CliRunner().invoke(main, ["run", str(path), "--partition", "-q"])
    assert r.exit_code == 1
    assert r.output.startswith(f"{path}:13:10: error: 'stablehlo.add' op has sharded tensors on meshes with "
                               "different axes (@mesh, @mesh_1)"), r.output
    assert "func.func" not in r.output   # (no program)
    path.write_text(PADDED_218)
    r = CliRunner().invoke(main, ["opt", str(path), "-sdy-propagation-pipeline", "-sdy-partitioner-pipeline"])
    assert r.exit_code == 1
    assert r.output.startswith(f"{path}:9:9: error: 'stablehlo.maximum' op has sharded tensors on meshes with "
                               "different axes (@mesh, @mesh_1)"), r.output
