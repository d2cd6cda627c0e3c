"""`sdylog explain` and `Propagation.explain` on what fuzzing them found: every
valid program explains, and the sharding explained is the one `sdylog run`
writes (after the export, for the entry function's arguments and results)."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import sdylog
from sdylog.commands.explain import explain

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
