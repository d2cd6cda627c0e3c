"""The census a pipeline's steps share, and the facts kept in its scope,
checked against a fresh walk (and a fresh extraction) after every step."""
import sys
from pathlib import Path

import pytest

from sdylog.passes import census as census_module
from sdylog.passes.census import ATTRIBUTES_ONLY, PRESERVED, SHARDINGS_ONLY, Census, Invalidated

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "facts"))
from compacted import compacted  # noqa: E402  (tests/facts' comparison)
from small_models import ROOT, corpus_dir  # noqa: E402  (tests/commands' corpus)

_WALK = Census.of


def assert_agrees_with_walk(kept: Census) -> None:
    """What the census kept (the lists of names not stale, and the pre-order
    lists if it has them) is what a fresh walk finds, op for op."""
    fresh = _WALK(kept.module)
    for name in set(kept.by_name) | set(fresh.by_name):
        if name in kept.stale:
            continue
        ops, expected = kept.by_name.get(name, []), fresh.by_name.get(name, [])
        assert len(ops) == len(expected) and all(a == b for a, b in zip(ops, expected)), name
    if kept.tops is not None:
        assert kept.names == fresh.names
        assert all(len(a) == len(b) and all(x == y for x, y in zip(a, b)) for a, b in zip(kept.tops, fresh.tops))


def assert_facts_current(ctx, kept) -> None:
    """Facts kept in the scope, followed to the module as it is now, are
    those a fresh extraction gives, ids aside (with the replicated shardings
    the reshard rules asked for, in the same order)."""
    from sdylog.facts.extract import extract_facts
    with kept.module.context:
        fresh = extract_facts(kept.module, ctx.filename, conservative=kept.conservative,
                              static_shapes=kept.static_shapes, strict_rules=kept.strict_rules)
    facts = kept.current(ctx.filename)
    for mesh, rank in facts.replicated:
        fresh.add_replicated_sharding(mesh, rank)
    followed, expected = compacted(facts), compacted(fresh)
    if followed["rules_from_attributes"] != expected["rules_from_attributes"]:
        # populate_rules (keep-sharding-rules=true) wrote the facts' own rules
        # onto the ops: a fresh extraction reads them from there (the flag
        # set), the followed facts hold the registry's, the same rules
        # ("rules" and the op_rule rows compare equal)
        assert not followed["rules_from_attributes"]
        expected["rules_from_attributes"] = False
    assert followed == expected


def text_kept_if_preserved(run):
    """`run` (a pass or pipeline step: the module first), checking that when
    it returns PRESERVED the module prints as it did before."""
    def checked(module, *args):
        before = str(module)
        result = run(module, *args)
        if result is PRESERVED:
            assert str(module) == before, f"{args[-1]}: PRESERVED, but the module changed"
        return result
    return checked


class _PassCheckingPreserved:
    """A PassInfo whose pass is checked by text_kept_if_preserved."""
    def __init__(self, info):
        self.info = info

    def __getattr__(self, name):
        return getattr(self.info, name)

    def load(self):
        return text_kept_if_preserved(self.info.load())


@pytest.fixture
def checked_steps(monkeypatch):
    """After every step that reports to a shared census: the census and the
    kept facts agree with the module; a step that returned PRESERVED left
    the module's text as it was. Returns the results seen."""
    from sdylog.passes import driver, pipelines
    seen = []
    monkeypatch.setattr(pipelines, "_run_step", text_kept_if_preserved(pipelines._run_step))
    lookup = driver.lookup
    monkeypatch.setattr(driver, "lookup", lambda name: _PassCheckingPreserved(lookup(name)))
    follow = census_module.follow_step

    def checked(ctx, result):
        follow(ctx, result)
        seen.append(result)
        shared = getattr(ctx, "census", None)
        if shared is None:
            return
        if shared.get("census") is not None:
            assert_agrees_with_walk(shared["census"])
        if shared.get("facts") is not None:
            assert_facts_current(ctx, shared["facts"])
    for where in (census_module, pipelines, driver):
        monkeypatch.setattr(where, "follow_step", checked)
    return seen


PIPELINES = ["-sdy-propagation-pipeline -sdy-insert-explicit-reshards=enable-full-version=true",
             "-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true",
             "-sdy-propagation-pipeline -sdy-partitioner-pipeline",
             "-sdy-user-priority-propagate=keep-sharding-rules=true -sdy-export-pipeline"]


@pytest.mark.parametrize("model", ["mlp", "shard_map_mlp", "scan_rnn", "embed_gather"])
@pytest.mark.parametrize("flags", PIPELINES)
def test_census_and_facts_agree_with_a_fresh_walk_after_every_step(checked_steps, model, flags):
    from sdylog.passes.driver import optimize_text, parse_flags
    corpus = corpus_dir()
    path = corpus / f"{model}.mlir" if corpus else ROOT / "examples" / f"{model}.mlir"
    if not path.exists():
        pytest.skip(f"{path} not found")
    optimize_text(path.read_text(), str(path), parse_flags(flags.split()))
    assert PRESERVED in checked_steps and any(isinstance(r, Invalidated) for r in checked_steps)


# Many calls (@f twice from @main, @g twice from @f) and a dead private
# function: the call-graph passes clone and erase functions, and symbol-dce
# reads every call the census keeps at each of its steps (a pass not
# reporting the calls it erased would hand it freed ops).
MANY_CALLS = '''sdy.mesh @m = <["p"=2, "q"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}]>}, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @f(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @f(%b) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@m, [{}, {"q"}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
func.func private @f(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @g(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @g(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @g(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %a : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func private @dead(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @g(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}'''

# Named computations, two of one name, one nested. (The propagation
# pipeline, Shardy's as ours, rejects named computations in its input: its
# import adds a second edge on theirs.)
NAMED_COMPUTATIONS = '''sdy.mesh @m = <["p"=2, "q"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}, {}]>}, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.named_computation<"f">(%a) (%x: tensor<8x8xf32>) {
    %n = stablehlo.negate %x : tensor<8x8xf32>
    sdy.return %n : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.named_computation<"f">(%b) (%x: tensor<8x8xf32>) {
    %n = stablehlo.negate %x : tensor<8x8xf32>
    sdy.return %n : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.named_computation<"outer">(%0, %1) (%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) {
    %d = stablehlo.add %x, %y : tensor<8x8xf32>
    %i = sdy.named_computation<"inner">(%d) (%z: tensor<8x8xf32>) {
      %e = stablehlo.exponential %z : tensor<8x8xf32>
      sdy.return %e : tensor<8x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    sdy.return %i : tensor<8x8xf32>
  } : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@m, [{}, {"q"}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}'''


@pytest.mark.parametrize("text, flags", [(MANY_CALLS, flags) for flags in PIPELINES]
                         + [(NAMED_COMPUTATIONS, PIPELINES[-1])])
def test_census_and_facts_agree_after_every_step_on_calls_and_named_computations(checked_steps, text, flags):
    from sdylog.passes.driver import optimize_text, parse_flags
    out = optimize_text(text, "f.mlir", parse_flags(flags.split()))
    if text is MANY_CALLS:   # (the propagation pipeline's symbol-dce steps erase @dead)
        assert ("@dead" in out) == ("-sdy-propagation-pipeline" not in flags)
    assert PRESERVED in checked_steps and any(isinstance(r, Invalidated) for r in checked_steps)


CONSTANTS = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = sdy.constant dense<1.0> : tensor<8xf32>
  %c1 = sdy.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.add %c0, %c1 : tensor<8xf32>
  %1 = stablehlo.negate %a : tensor<8xf32>
  %2 = stablehlo.add %0, %a : tensor<8xf32>
  return %2 : tensor<8xf32>
}'''


def test_the_census_walks_again_only_for_touched_names(monkeypatch):
    from sdylog.ir import parse_module
    module = parse_module(CONSTANTS, "f.mlir")
    walks = []
    monkeypatch.setattr(Census, "of", staticmethod(lambda m: walks.append(1) or _WALK(m)))
    with module.context:
        census = Census.of(module)
        adds = census.ops("stablehlo.add")
        census.follow(ATTRIBUTES_ONLY)   # attributes only: every list stays
        assert census.tops is not None and len(walks) == 1
        negate = census.ops("stablehlo.negate")[0]
        negate.erase()
        census.follow(Invalidated(frozenset({"stablehlo.negate"})))
        assert census.tops is None and census.ops("stablehlo.add") == adds and len(walks) == 1
        assert not census.has("stablehlo.negate") and len(walks) == 2
        assert_agrees_with_walk(census)
        assert "stablehlo.negate" not in [op.name for op in census.all_ops()]


def test_a_pass_that_may_have_done_anything_drops_the_census():
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import census, follow_step, shared_census
    module = parse_module(CONSTANTS, "f.mlir")
    ctx = PassContext(filename="f.mlir")
    with module.context, shared_census(ctx):
        census(module, ctx)
        follow_step(ctx, Invalidated(frozenset()))
        assert "census" in ctx.census
        follow_step(ctx, None)
        assert "census" not in ctx.census


def test_facts_are_extracted_once_and_follow_the_module(monkeypatch):
    """Two reshard runs with nothing changed between them read one
    extraction, which also serves a run asking for fewer checks; after a
    change of shardings they are read again where shardings are (SHARDINGS_ONLY);
    after a change of other attributes (plain ATTRIBUTES_ONLY) or one the
    facts were not told of, extracted again. The op sharding rules built
    once serve every extraction of the module."""
    from sdylog.facts import extract, shared
    from sdylog.oprules import RuleCache
    from sdylog.ir import parse_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import follow_step, shared_census
    calls, reads = [], []
    real, reread = extract.extract_facts, extract.read_shardings
    monkeypatch.setattr(shared, "extract_facts", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(shared, "read_shardings", lambda *a, **k: reads.append(1) or reread(*a, **k))
    module = parse_module(CONSTANTS, "f.mlir")
    ctx = PassContext(filename="f.mlir")
    with module.context, shared_census(ctx):
        first = shared.module_facts(module, ctx, strict_rules=True)
        follow_step(ctx, PRESERVED)
        assert shared.module_facts(module, ctx, strict_rules=True) is first and len(calls) == 1
        assert shared.module_facts(module, ctx, strict_rules=False) is first and len(calls) == 1
        follow_step(ctx, SHARDINGS_ONLY)
        again = shared.module_facts(module, ctx, strict_rules=True)
        assert len(calls) == 1 and len(reads) == 1 and compacted(again) == compacted(first)
        follow_step(ctx, ATTRIBUTES_ONLY)   # (e.g. a sym_visibility the facts read: not followed)
        assert compacted(shared.module_facts(module, ctx, strict_rules=True)) == compacted(first)
        assert len(calls) == 2 and len(reads) == 1
        module.body.operations[1].regions[0].blocks[0].operations[3].erase()   # (the negate)
        follow_step(ctx, Invalidated(frozenset({"stablehlo.negate"}), shardings_only=True))
        builds = []
        monkeypatch.setattr(RuleCache, "_build", lambda self, op: builds.append(op.name))
        third = shared.module_facts(module, ctx, strict_rules=True)
        assert len(calls) == 3 and "stablehlo.negate" not in third.op_names
        assert not builds and third.rules and all(r in first.rules for r in third.rules)   # (built once, reused)


def test_rules_built_for_one_module_serve_the_next_of_its_context(monkeypatch):
    """The op sharding rules are kept per MLIR context (facts/shared.py): the
    same text parsed again (a warm run) builds no rule, and its facts are
    those a fresh RuleCache gives."""
    from sdylog.facts import shared
    from sdylog.facts.extract import extract_facts
    from sdylog.ir import parse_module
    from sdylog.oprules import RuleCache
    from sdylog.passes import PassContext
    first = parse_module(CONSTANTS, "f.mlir")
    with first.context:
        shared.module_facts(first, PassContext(filename="f.mlir"), strict_rules=True)
    again = parse_module(CONSTANTS, "f.mlir")
    plain = extract_facts(again, "f.mlir", strict_rules=True, rules=RuleCache())
    builds = []
    real = RuleCache._build
    monkeypatch.setattr(RuleCache, "_build", lambda self, op: builds.append(op.name) or real(self, op))
    with again.context:
        kept = shared.module_facts(again, PassContext(filename="f.mlir"), strict_rules=True)
    assert plain.rules and not builds
    assert kept.rules == plain.rules and kept.relations == plain.relations


@pytest.mark.parametrize("case", ["SPLIT", "SPLIT_FAR_USES", "SPLIT_SOLE_USES", "SPLIT_NO_OPERANDS"])
def test_the_splitter_and_merger_relist_the_census_as_a_walk_would(checked_steps, case):
    """The splitter's copies (before their originals, nested regions and
    sharding groups among them) and erasures, and the merger's erasures,
    handed to the census instead of a walk, are what a fresh walk finds."""
    import test_import_passes
    from sdylog.passes.driver import optimize_text, parse_flags
    flags = "-sdy-constant-or-scalar-splitter -sdy-constant-or-scalar-merger"
    optimize_text(getattr(test_import_passes, case), "f.mlir", parse_flags(flags.split()))
    assert any(isinstance(r, Invalidated) and r.relisted for r in checked_steps)


# A constant and a value computed from it in sharding groups, each used
# twice: the splitter copies each use's sub-computation with its groups, the
# merger erases the constant's copies (their groups then hold the first).
GROUPED_CONSTANT = '''sdy.mesh @m = <["p"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p"}]>}) -> tensor<8xf32> {
  %c = stablehlo.constant dense<3.0> : tensor<8xf32>
  sdy.sharding_group %c group_id=7 : tensor<8xf32>
  %n = stablehlo.negate %c : tensor<8xf32>
  sdy.sharding_group %n group_id=9 : tensor<8xf32>
  %e = stablehlo.exponential %a : tensor<8xf32>
  %u = stablehlo.multiply %e, %n : tensor<8xf32>
  %v = stablehlo.add %u, %n : tensor<8xf32>
  %w = stablehlo.add %v, %c : tensor<8xf32>
  %x = stablehlo.add %w, %c : tensor<8xf32>
  return %x : tensor<8xf32>
}'''


@pytest.mark.parametrize("flags", ["-sdy-propagation-pipeline", PIPELINES[0]])
def test_kept_facts_follow_sharding_groups_of_merged_copies(checked_steps, flags):
    from sdylog.passes.driver import optimize_text, parse_flags
    optimize_text(GROUPED_CONSTANT, "f.mlir", parse_flags(flags.split()))
    assert any(isinstance(r, Invalidated) and "sdy.sharding_group" in r.touched for r in checked_steps)


def test_edited_places_and_leaves_out_ops_by_id():
    from sdylog.passes.census import edited

    class Op:   # (edited reads the names of the ops it places)
        def __init__(self, name):
            self.name = name
    a, b, c, d, new1, new2 = (Op(n) for n in ("a", "b", "c", "d", "n1", "n2"))
    ops, names = [a, b, c, d], ["a", "b", "c", "d"]
    assert edited(ops, names, {}, {id(b), id(d)}) == ([a, c], ["a", "c"])
    placed = {id(b): [new1, new2], id(d): [new1]}
    assert edited(ops, names, placed, {id(b)}) == ([a, new1, new2, c, new1, d], ["a", "n1", "n2", "c", "n1", "d"])
    assert edited(ops, names, {}, set()) == (ops, names)
