"""The walk's facts against its plain reference (extract_facts(plain=True):
every op read by add_op_head and add_op_tail) on real inputs: every corpus
model, before and after propagation, and the inputs of Shardy's
propagation lit tests. And the kept facts the reshard step reads
(followed past the erasures, their shardings read again: facts/shared.py)
against a fresh extraction of the module as it is then, at the reshard
step and after every step of the pipelines, on the same inputs."""
import sys
from pathlib import Path

import pytest

from sdylog.facts import extract_facts
from sdylog.ir import SdylogError, parse_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from conformance_cases import shared_dir  # noqa: E402
from small_models import corpus_dir  # noqa: E402

CORPUS = corpus_dir()
CORPUS_MODELS = sorted(CORPUS.glob("*.mlir")) if CORPUS else []
LIT = shared_dir() / "conformance" / "shardy-tests" / "propagation" if shared_dir() else None
LIT_FILES = sorted(LIT.glob("*.mlir")) if LIT and LIT.is_dir() else []


def same_facts(fast, plain) -> None:
    """Every relation's rows, in order, and the id maps and lists."""
    assert {n for n, rows in fast.relations.items() if rows} == {n for n, rows in plain.relations.items() if rows}
    for relation, rows in plain.relations.items():
        assert fast.rows(relation) == rows, relation
    for name in ("value_ops", "sharded_ops", "shardings", "rules", "op_names", "tail_order", "op_results",
                 "value_type_ids", "type_is_ranked", "func_args", "func_results", "mesh_symbols"):
        assert getattr(fast, name) == getattr(plain, name), name
    assert fast.value_ids == plain.value_ids and fast.ops == plain.ops and fast.values == plain.values


def both(text: str, **options):
    """The walk's facts and the plain reference's, of one parse of `text`."""
    module = parse_module(text)
    return extract_facts(module, **options), extract_facts(module, plain=True, **options)


@pytest.mark.skipif(not CORPUS_MODELS, reason="no shared corpus")
@pytest.mark.parametrize("path", CORPUS_MODELS, ids=lambda p: p.stem)
def test_corpus_facts_agree_with_the_plain_walk(path):
    from sdylog.passes.driver import optimize_text, parse_flags
    text = path.read_text()
    same_facts(*both(text, static_shapes=True))
    propagated = optimize_text(text, str(path), parse_flags(["-sdy-propagation-pipeline"]))
    same_facts(*both(propagated, static_shapes=True))   # (every op sharded)


def lit_cases(path: Path) -> list[str]:
    return [case for case in path.read_text().split("// -----") if "func.func" in case]


@pytest.mark.skipif(not LIT_FILES, reason="no shared conformance tests")
@pytest.mark.parametrize("path", LIT_FILES, ids=lambda p: p.stem)
def test_lit_inputs_facts_agree_with_the_plain_walk(path):
    read = 0
    for case in lit_cases(path):
        try:
            fast, plain = both(case)
        except SdylogError:   # (inputs the lit test expects an error of)
            with pytest.raises(SdylogError):
                both(case)
            continue
        same_facts(fast, plain)
        read += 1
    assert read


@pytest.mark.skipif(not CORPUS_MODELS, reason="no shared corpus")
def test_the_reshard_steps_kept_facts_equal_a_fresh_extraction(monkeypatch):
    # -sdy-propagation-pipeline's reshard step reads the propagation's facts,
    # followed past the constant merger's erasures, shardings read again
    # (when no step dropped them): their ops' post-order and shardings are
    # those of a fresh extraction (ids aside, which erasures leave out:
    # compared through the ops and values they name)
    import sdylog.facts.shared as shared
    from sdylog.passes.driver import optimize_text, parse_flags
    seen = []
    current = shared._Kept.current

    def recording(kept, filename):
        facts = current(kept, filename)
        seen.append((facts, extract_facts(kept.module, filename)))
        return facts
    monkeypatch.setattr(shared._Kept, "current", recording)
    for path in CORPUS_MODELS:
        if path.stat().st_size < 200_000:
            optimize_text(path.read_text(), str(path), parse_flags(["-sdy-propagation-pipeline"]))
    assert any(kept.rows("value_sharding") for kept, _ in seen)
    for kept, fresh in seen:
        op_of = {o: fresh.ops.index(op) for o, op in enumerate(kept.ops) if op is not None}
        assert [op_of[o] for o in kept.tail_order] == fresh.tail_order
        value_of = {v: fresh.value_ids[value] for v, value in enumerate(kept.values) if value is not None}
        assert sorted((value_of[v], s) for v, s in kept.rows("value_sharding")) == \
            sorted(fresh.rows("value_sharding"))
        assert kept.shardings == fresh.shardings
        for o in kept.tail_order:
            assert [value_of[v] for v in kept.op_results[o]] == list(fresh.op_results[op_of[o]])


# -- the kept facts after every step ------------------------------------------
# The facts kept in a pipeline's census scope follow its steps
# (facts/shared.py: kept after a step that changed shardings only, without
# the ops it told it erased; read again where shardings are when next
# asked). After every step, a copy of them brought up to date, as the next
# reader would (the kept state itself left as it is: the later steps build
# on it, as in a run), equals a fresh extraction of the module then.

def _probe_current(kept, filename: str):
    """kept.current(filename) on a copy of `kept`."""
    from dataclasses import replace
    return replace(kept, erased=dict(kept.erased), told=set(kept.told)).current(filename)


def _assert_kept_facts_current(ctx, kept) -> None:
    from compacted import compacted
    with kept.module.context:
        facts = _probe_current(kept, ctx.filename)
        fresh = extract_facts(kept.module, ctx.filename, conservative=kept.conservative)
    for mesh, rank in facts.replicated:   # (the reshard rules' additions, in the order they asked)
        fresh.add_replicated_sharding(mesh, rank)
    assert compacted(facts) == compacted(fresh)


@pytest.fixture
def kept_facts_checked(monkeypatch):
    """After every step: the kept facts, brought up to date, are a fresh
    extraction's. Returns, for each step after which there were facts to
    check, whether they had erasures or sharding changes to follow."""
    from sdylog.passes import census as census_module
    from sdylog.passes import driver, pipelines
    from sdylog.propagation import passes as propagation_passes
    follow = census_module.follow_step
    checked = []

    def follow_and_check(ctx, result):
        follow(ctx, result)
        scope = getattr(ctx, "census", None)
        kept = None if scope is None else scope.get("facts")
        if kept is not None:
            checked.append(bool(kept.erased) or kept.stale)
            _assert_kept_facts_current(ctx, kept)
    for where in (census_module, pipelines, driver, propagation_passes):
        monkeypatch.setattr(where, "follow_step", follow_and_check)
    return checked


PIPELINES = ["-sdy-propagation-pipeline",
             "-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true"]


# transformer_L24 and L48 repeat L8's layer: ~40 s of the suite for nothing new.
STEP_MODELS = [p for p in CORPUS_MODELS if p.stem not in ("transformer_L24", "transformer_L48")]


@pytest.mark.skipif(not STEP_MODELS, reason="no shared corpus")
@pytest.mark.parametrize("flags", PIPELINES)
@pytest.mark.parametrize("path", STEP_MODELS, ids=lambda p: p.stem)
def test_corpus_kept_facts_equal_a_fresh_extraction_after_every_step(kept_facts_checked, path, flags):
    from sdylog.passes.driver import optimize_text, parse_flags
    optimize_text(path.read_text(), str(path), parse_flags(flags.split()))
    assert any(kept_facts_checked)   # (at least propagation's write-back to follow)


@pytest.mark.skipif(not LIT_FILES, reason="no shared conformance tests")
@pytest.mark.parametrize("path", LIT_FILES, ids=lambda p: p.stem)
def test_lit_inputs_kept_facts_equal_a_fresh_extraction_after_every_step(kept_facts_checked, path):
    from sdylog.passes.driver import optimize_text, parse_flags
    flags = parse_flags(["-sdy-propagation-pipeline"])
    ran = 0
    for case in lit_cases(path):
        try:
            optimize_text(case, path.name, flags)
            ran += 1
        except SdylogError:   # (inputs the lit test expects an error of, or with no @main)
            pass
    assert kept_facts_checked or not ran
