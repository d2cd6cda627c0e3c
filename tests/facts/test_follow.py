"""Facts that followed a pipeline's steps (sdylog/facts/shared.py, follow.py)
equal those a fresh extraction reads from the module, ids aside."""
from pathlib import Path

import pytest

import sdylog.reshard.driver as reshard_driver
from sdylog.facts.extract import extract_facts
from sdylog.passes.driver import optimize_text, parse_flags

from compacted import compacted

GOLDEN = sorted((Path(__file__).parents[2] / "golden").glob("*.in.mlir"))
FLAGS = "-sdy-propagation-pipeline -sdy-insert-explicit-reshards=enable-full-version=true"


def _reshard_facts(monkeypatch, text: str, name: str) -> list:
    """(facts the reshard steps read, a fresh extraction then) at each reshard step of FLAGS."""
    seen = []
    kept = reshard_driver.module_facts

    def module_facts(module, ctx, **options):
        facts = kept(module, ctx, **options)
        seen.append((facts, extract_facts(module, name, **options)))
        return facts
    monkeypatch.setattr(reshard_driver, "module_facts", module_facts)
    optimize_text(text, name, parse_flags(FLAGS.split()))
    return seen


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name.removesuffix(".in.mlir") for p in GOLDEN])
def test_followed_facts_equal_fresh_ones(monkeypatch, path):
    seen = _reshard_facts(monkeypatch, path.read_text(), path.name)
    assert len(seen) == 2
    for followed, fresh in seen:
        assert compacted(followed) == compacted(fresh)


# a constant two ops use (the splitter copies it for each, the merger erases the copy)
SHARED_CONSTANT = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8xf32>
  %1 = stablehlo.multiply %0, %c : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def test_facts_follow_the_constant_merger(monkeypatch):
    # the splitter copies the constant for each use; propagation shards the
    # copies alike; the merger erases all but the first: the facts
    # propagation read serve the reshard steps, without the copies
    seen = _reshard_facts(monkeypatch, SHARED_CONSTANT, "m.mlir")
    (followed, fresh), (again, _) = seen
    assert again is followed   # (the first reshard step wrote nothing)
    assert len(followed.ops) > len(fresh.ops)   # (the erased copy's id is left out)
    assert compacted(followed) == compacted(fresh)


def test_erasing_an_op_with_regions_drops_what_it_holds():
    # a reduce (its body's ops and block arguments with it) erased, its
    # result's uses taken by another value: the rows left are those of
    # the module after the same edit (the group of a value inside goes; the
    # group of its result follows the value replacing it)
    from sdylog.facts.follow import without_erased
    from sdylog.ir import parse_module
    text = """
func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      sdy.sharding_group %s group_id=3 : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  sdy.sharding_group %0 group_id=4 : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""
    module = parse_module(text)
    with module.context:
        facts = extract_facts(module)
        reduce = next(o for o, name, *_ in facts.rows("op") if name == "stablehlo.reduce")
        (result,) = [v for o, _, v in facts.rows("op_result") if o == reduce]
        arg1 = facts.rows("func_arg")[1][2]
        followed = without_erased(facts, {reduce: {result: arg1}})
        op = facts.ops[reduce]
        op.result.replace_all_uses_with(facts.values[arg1])
        op.erase()
        fresh = extract_facts(module)
    assert len(followed.rows("op")) == len(facts.rows("op")) - 4   # (the reduce, its add, group and return)
    assert followed.rows("sharding_group") == [(arg1, 4)]
    assert compacted(followed) == compacted(fresh)
    # the erased ops and values (the reduce's result, its block arguments,
    # the add's result) have no handles left: a reader that misses the gap
    # fails at once, not on freed IR
    gone = [o for o, op in enumerate(followed.ops) if op is None]
    assert len(gone) == 4 and reduce in gone
    assert sum(v is None for v in followed.values) == 4
    assert followed.live_value_ids() == sorted(v for v, *_ in followed.rows("value"))
    assert facts.ops[reduce] is not None   # (the facts followed are left as they were)


def test_readers_of_every_value_skip_erased_ones(monkeypatch):
    # IdNames (query/--db names) and the report's counts loop over values:
    # after the merger erased a copy, they read the values left
    from sdylog.commands.values import IdNames, match_values
    (followed, fresh), _ = _reshard_facts(monkeypatch, SHARED_CONSTANT, "m.mlir")
    assert any(v is None for v in followed.values) and len(followed.live_value_ids()) == len(fresh.values)
    names, _ = match_values(followed, [])
    ids = IdNames(followed, [], "main", "m.mlir", matched=names)
    for v in followed.live_value_ids():
        assert ids.value(v)
    for o, *_ in followed.rows("op"):
        assert ids.op(o)



def test_no_row_names_an_erased_op():
    # a manual computation's result edge is not nested in it: its
    # edge_manual row names it in a later column, and goes with it too
    from sdylog.facts.follow import _columns, without_erased
    from sdylog.facts.schema import schema
    from sdylog.ir import parse_module
    assert _columns("op")[2] == () and _columns("edge_manual")[2] == (1,)   # (an op's parent: nesting)
    text = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<4xf32>) {
    %e = sdy.data_flow_edge %a : tensor<4xf32>
    %n = stablehlo.negate %e : tensor<4xf32>
    sdy.return %n : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = sdy.data_flow_edge %0 : tensor<8xf32>
  %2 = stablehlo.add %1, %arg1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
"""
    module = parse_module(text)
    with module.context:
        facts = extract_facts(module)
    assert len(facts.rows("edge_manual")) == 2
    manual = next(o for o, name, *_ in facts.rows("op") if name == "sdy.manual_computation")
    (result,) = [v for o, _, v in facts.rows("op_result") if o == manual]
    followed = without_erased(facts, {manual: {result: facts.rows("func_arg")[1][2]}})
    gone = {o for o, op in enumerate(followed.ops) if op is None}
    assert manual in gone and followed.rows("edge_manual") == []
    for name, rows in followed.relations.items():
        columns = [i for i, c in enumerate(schema().relations[name].columns) if c.type_name == "Op"]
        assert not any(row[i] in gone for row in rows for i in columns), name


@pytest.mark.parametrize("change, kept", [
    ("shardings only", True),
    ("shardings only, any op", False),   # Invalidated(None, shardings_only=True): ops may have come and gone
    ("attributes only", False),
    ("anything", False),
])
def test_follow_keeps_facts_only_after_shardings_only_changes_it_was_told_of(change, kept):
    from sdylog.facts.shared import _Kept, follow
    from sdylog.ir import parse_module
    from sdylog.passes.census import ATTRIBUTES_ONLY, SHARDINGS_ONLY, Invalidated
    changes = {"shardings only": SHARDINGS_ONLY, "shardings only, any op": Invalidated(None, shardings_only=True),
               "attributes only": ATTRIBUTES_ONLY, "anything": None}
    module = parse_module(SHARED_CONSTANT)
    with module.context:
        scope = {"facts": _Kept(module, False, False, False, extract_facts(module))}
        follow(scope, changes[change])
    assert ("facts" in scope) == kept
    if kept:
        assert scope["facts"].stale   # (its shardings are read again when next asked)


# a manual computation (the import adds data-flow edges on its argument and result)
MANUAL = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %n = stablehlo.negate %a : tensor<4x8xf32>
    sdy.return %n : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""


def test_facts_follow_the_sinking_of_a_manual_computations_edges(monkeypatch):
    # the edge on the manual computation's result has its value id before
    # the walk reads the edge (it is an edge source): the edge's op must
    # still be known by that value (value_ops) for the erasure to be followed
    import sdylog.facts.shared as shared
    extracted = []
    extract = shared.extract_facts
    monkeypatch.setattr(shared, "extract_facts", lambda *a, **k: extracted.append(1) or extract(*a, **k))
    flags = "-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true"
    seen = []
    kept = reshard_driver.module_facts

    def module_facts(module, ctx, **options):
        facts = kept(module, ctx, **options)
        seen.append((facts, extract_facts(module, "m.mlir", **options)))
        return facts
    monkeypatch.setattr(reshard_driver, "module_facts", module_facts)
    optimize_text(MANUAL, "m.mlir", parse_flags(flags.split()))
    assert len(extracted) == 1 and len(seen) >= 2
    for followed, fresh in seen:
        assert compacted(followed) == compacted(fresh)
