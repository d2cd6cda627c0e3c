"""`sdylog explain` and `Propagation.explain` on what fuzzing them found: every
valid program explains, and the sharding explained is the one `sdylog run`
writes (after the export, for the entry function's arguments and results)."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import sdylog
from sdylog.commands.explain import explain, partitioning_text
from sdylog.commands.pipeline import run_pipeline

REGRESSIONS = Path(__file__).parents[1] / "propagation" / "regressions"


def run_explain(*args):
    result = CliRunner().invoke(explain, list(args))
    return result.exit_code, result.stdout, result.stderr


def dims(sharding_text: str) -> list[list[str]]:
    """The axes of each dimension of `<@mesh, [{"a", ?}, {}]>` (open or closed, priorities aside)."""
    body = re.match(r"<[^\[]*\[(.*)\]", sharding_text).group(1)
    return [[a.strip() for a in d.split(",") if a.strip() and a.strip() != "?"]
            for d in re.findall(r"\{([^}]*)\}", body.split("]")[0])]


def explained(text: str) -> list[list[str]] | None:
    """The sharding an explanation ends with: what the export writes, else what propagation gives
    (None: not sharded)."""
    m = re.search(r"^the export writes (<.*?>) on ", text, re.M) or re.search(r"^\S.* gets (<.*>)$", text, re.M)
    if m is None:
        assert re.search(r"^\S.* is not sharded", text, re.M), text
        return None
    return dims(m.group(1))


# A named computation of the input (not a call the import made one): the import edges it twice
# (sdy-add-data-flow-edges, then sdy-import-func-calls on every named computation), which only
# the export makes valid again; a run stopped before the export (explain's) is not verified.
@pytest.mark.parametrize("name", ["named_computation_edgeless", "named_computation_late"])
def test_the_api_and_tree_explain_a_named_computation_of_the_input(name):
    path = str(REGRESSIONS / f"{name}.mlir")
    result = sdylog.propagate(path)
    for value in result.values:
        assert " gets <" in result.explain(value) or " is not sharded" in result.explain(value)
        assert result.explain(value, tree=True).startswith("// ")
    code, out, err = run_explain(path, "@main:result0", "--tree")
    assert code == 0, err
    assert out.startswith("// @main:result0: tensor")


def test_a_call_result_gets_its_reshards():
    # %0 is a named computation in the input, a call after the export: a value the passes
    # replaced twice, found again by its location, not by the parsed input's handle
    path = str(REGRESSIONS / "named_computation_edgeless.mlir")
    line = (f'  {path}:6:8: written by the export step: reshard [{{}}, {{"x"}}] -> [{{"x"}}, {{"y"}}], '
            '128 B per device')
    code, out, err = run_explain(path, "%0")
    assert code == 0, err
    assert line in out.splitlines()
    assert line in sdylog.propagate(path).explain("%0").splitlines()


def test_partitioning_reads_no_handle_of_the_parsed_input():
    # the passes free the input's values, and a new value may take a freed one's address:
    # what partitioning says of a value is the same when the input's handles are gone
    path = str(REGRESSIONS / "named_computation_edgeless.mlir")
    run = run_pipeline(path, keep_values=True)
    names = ["%0", "%1", "%2", "%arg0", "@main:result0"]
    before = [partitioning_text(n, run) for n in names]
    assert any(before)
    for iv in run.named.values:
        iv.handle = object()
    assert [partitioning_text(n, run) for n in names] == before


NOT_DIVIDING = """sdy.mesh @mesh = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b"}]>}) -> tensor<6x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
"""


def test_what_the_export_writes_on_the_entry_function_is_said(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(NOT_DIVIDING)
    api = sdylog.propagate(str(path))
    for value, what in [("%arg0", "argument 0"), ("@main:result0", "result 0")]:
        code, out, err = run_explain(str(path), value)
        assert code == 0, err
        assert out == api.explain(value)
        assert re.search(r'^\S.* gets <@mesh, \[\{"a"\}, \{"b"\}\]>$', out, re.M), out
        assert (f'the export writes <@mesh, [{{}}, {{"b"}}]> on {what} of @main, not propagation\'s '
                f'<@mesh, [{{"a", ?}}, {{"b"{", ?" if what == "result 0" else ""}}}]>: dim 0 of size 6 does '
                'not divide into 4 shards (sdy-update-non-divisible-input-output-shardings)') in out.splitlines()
        assert explained(out) == dims(str(api[value].sharding)) == [[], ['"b"']]


# Regressions whose entry arguments or results the export changes (a sharding that does not
# divide its dimension, a sub-axis in an open dimension): the explanation ends with what is written.
@pytest.mark.parametrize("name", ["dead_use_revisit", "elementwise_unit_two_dims", "group_empty_member_mesh",
                                  "group_empty_member_own_mesh", "priority_arg_sub_axis", "same_value_two_slots"])
def test_the_entry_functions_sharding_explained_is_the_one_written(name):
    result = sdylog.propagate(str(REGRESSIONS / f"{name}.mlir"))
    for v in result.inputs + result.outputs:
        written = dims(str(v.sharding)) if v.sharding is not None else None
        said = explained(result.explain(v.name))
        assert said == written or not any(said or []) and not any(written or []), v.name


def test_what_the_export_writes_on_a_call_is_said():
    # %5 is a call of @f2 (6 rows on "w"=4): the export shrinks @f2's shardings, and the call's with them
    path = str(REGRESSIONS / "priority_arg_sub_axis.mlir")
    result = sdylog.propagate(path)
    assert ('%5 = call @f2(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2}, {}]>]>}'
            in result.module_text.replace("%9 = call", "%5 = call"))
    line = ('the export writes <@mesh, [{"w":(1)2}, {}]> on it in @main, not propagation\'s '
            '<@mesh, [{"w", ?}, {?}]>: dim 0 of size 6 does not divide into 4 shards '
            '(sdy-update-non-divisible-input-output-shardings)')
    text = result.explain("%5")
    assert re.search(r'^@main:%5 \(func.call at .*\) gets <@mesh, \[\{"w"\}, \{\}\]>$', text, re.M), text
    assert line in text.splitlines()
    code, out, err = run_explain(path, "%5")
    assert code == 0 and out == text, err


MANUAL_NOT_DIVIDING = """sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", "b"}]>] out_shardings=[<@mesh, [{"a", "b"}]>] manual_axes={"a"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_what_the_export_writes_on_a_manual_computation_is_said(tmp_path):
    # the free axis "b" does not divide the body's 2 rows: the export cuts it to "b":(1)2
    path = tmp_path / "m.mlir"
    path.write_text(MANUAL_NOT_DIVIDING)
    result = sdylog.propagate(str(path))
    assert 'in_shardings=[<@mesh, [{"a", "b":(1)2}]>] out_shardings=[<@mesh, [{"a", "b":(1)2}]>]' in result.module_text
    for value, said in [("%arg1", 'the export writes <@mesh, [{"b":(1)2}]> on it in @main, not propagation\'s '
                                  '<@mesh, [{"b"}]>: dim 0 of size 2 does not divide into 4 shards'),
                        ("%0", 'the export writes <@mesh, [{"a", "b":(1)2}]> on it in @main, not propagation\'s '
                               '<@mesh, [{"a", "b"}]>: dim 0 of size 4 does not divide into 8 shards')]:
        text = result.explain(value)
        assert f"{said} (sdy-update-non-divisible-input-output-shardings)" in text.splitlines(), text
        code, out, err = run_explain(str(path), value)
        assert code == 0 and out == text, err
