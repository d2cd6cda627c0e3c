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
