"""Input values found again in the propagated module (commands/values.py)."""
import dataclasses

from sdylog.commands.values import input_values, match_values
from sdylog.facts.extract import extract_facts
from sdylog.ir.module import parse_module

_MODULE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}"""


def test_a_value_at_a_freed_values_address_is_not_taken_for_it():
    # The import frees values (a call's results) and a new value of the same
    # type may take a freed one's address: the handle then names another value.
    module = parse_module(_MODULE, "m.mlir")
    values = input_values(module, "m.mlir", describe=False)
    negate = next(iv for iv in values if iv.name == "%0")
    abs_ = next(iv for iv in values if iv.name == "%1")
    facts = extract_facts(module, "m.mlir")
    stale = dataclasses.replace(negate, handle=abs_.handle)   # (the negate's address, now the abs's value)
    _names, copies = match_values(facts, [stale])
    assert copies[id(stale)] == [facts.value_ids[negate.handle]]


def test_ids_are_named_only_for_the_runs_that_read_the_names(tmp_path):
    # explain and the API keep the input's values (run.named) and read no names of ids; a run asked
    # for both names its ids from the values' own match, as a run asked for names alone does
    from pathlib import Path

    from sdylog.commands.pipeline import run_pipeline
    mlp = str(Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir")
    assert run_pipeline(mlp, keep_values=True, export=False).names is None
    alone = run_pipeline(mlp, name_ids=True, export=False).names
    both = run_pipeline(mlp, keep_values=True, name_ids=True, export=False).names
    assert both.all_values() == alone.all_values() and both.all_ops() == alone.all_ops()
