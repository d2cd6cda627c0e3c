"""Values' shapes as type rows: the facts give each value's type
(value_type) and each type's dimensions and element count (type_dim,
type_elems); rules/schema.dl derives value_dim and value_elems from them,
and FactSet.rows_per_value gives those rows the same."""
import sys
from pathlib import Path

from sdylog.datalog import make_engine
from sdylog.facts import extract_facts
from sdylog.facts.schema import schema
from sdylog.ir import parse_module
from sdylog.ir.types import is_static_shaped, is_tensor, num_elements, shape_of

MODULE = """
func.func @main(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %d: tensor<?x4xf32>, %t: !stablehlo.token)
    -> (tensor<8x16xf32>, tensor<f32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x16xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1]
      : (tensor<8x4xf32>, tensor<f32>) -> tensor<f32>
  return %1, %r : tensor<8x16xf32>, tensor<f32>
}
"""


def from_types(facts) -> tuple[set, set]:
    """value_dim and value_elems rows read off each value's MLIR type."""
    dims, elems = set(), set()
    for v, value in enumerate(facts.values):
        dims |= {(v, d, n) for d, n in enumerate(shape_of(value.type))}
        if is_tensor(value.type) and is_static_shaped(value.type):
            elems.add((v, num_elements(value.type)))
    return dims, elems


def derived(facts) -> tuple[set, set]:
    """value_dim and value_elems as rules/schema.dl derives them from the facts."""
    engine = make_engine(schema(), "memory")
    for name in schema().inputs:
        if facts.rows(name):
            engine.load(name, facts.rows(name))
    engine.run()
    return set(engine.read("value_dim")), set(engine.read("value_elems"))


def check(facts) -> None:
    dims, elems = from_types(facts)
    assert derived(facts) == (dims, elems)
    value_dim, value_elems = facts.rows_per_value("type_dim"), facts.rows_per_value("type_elems")
    assert (set(value_dim), set(value_elems)) == (dims, elems)
    assert (len(value_dim), len(value_elems)) == (len(dims), len(elems))
    assert len(facts.rows("value_type")) == len(facts.values)   # (a row per value)


def test_value_dims_and_elements_come_from_their_types():
    facts = extract_facts(parse_module(MODULE))
    check(facts)
    # four distinct shapes of static tensors (8x4, 4x16, 8x16, scalar), one dynamic, one token
    types = {t for _, t in facts.rows("value_type")}
    assert len(types) == 6
    assert len({t for t, _ in facts.rows("type_elems")}) == 4


def test_value_dims_of_small_models():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
    from small_models import small_models
    for path in small_models():
        check(extract_facts(parse_module(path.read_text(), str(path)), str(path)))
