"""`sdylog facts FILE -o DIR` then `sdylog datalog rules/propagation.dl -F DIR`
derives what `sdylog run FILE` derives: the facts are those propagation
reads, after the import passes (before, a module with a call gave 4 rows of
final_dim_axis instead of 15 on examples/mlp.mlir)."""
import pytest
from click.testing import CliRunner

from sdylog.cli import main
from small_models import ROOT, small_models

# and golden inputs with calls and sharding groups
MODELS = list(dict.fromkeys([*small_models(), ROOT / "examples" / "mlp.mlir", ROOT / "golden" / "calls.in.mlir",
                             ROOT / "golden" / "sharding_group.in.mlir"]))


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_facts_then_datalog_derives_what_run_derives(model, tmp_path, monkeypatch):
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.datalog.runner import relation_text

    monkeypatch.chdir(tmp_path)                # (datalog finds rules/propagation.dl wherever it runs)
    r = CliRunner().invoke(main, ["facts", str(model), "-o", "facts"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["datalog", "rules/propagation.dl", "-F", "facts", "-D", "."])
    assert r.exit_code == 0, r.output
    derived = {p.stem: p.read_text() for p in tmp_path.glob("*.csv")}

    engine = run_pipeline(str(model)).result.engine
    assert sorted(derived) == ["final_dim", "final_dim_axis", "final_dim_priority", "final_func_result", "final_mesh",
                              "final_own_without_priorities", "final_value"]
    for relation, text in derived.items():
        assert text == relation_text(engine, relation), relation
    assert derived["final_dim_axis"]                    # (something was sharded)
