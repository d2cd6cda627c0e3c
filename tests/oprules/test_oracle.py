"""Our rule equals Shardy's (from jaxlib) on every op: the small cases, random
reshapes, and real models, in both modes."""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oprules_cases import CASES, _reshape
from oprules_oracle import our_rules, shardy_rules

MODELS = ["mlp", "mlp_grad", "convnet", "embed_gather", "scan_rnn", "shard_map_mlp", "transformer_L2"]
# ../shared beside the repository, as on every machine and in CI
CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpus", "jax")


def assert_same_rules(text, conservative):
    ours, theirs = our_rules(text, conservative), shardy_rules(text, conservative)
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    diffs = [(name, a, b) for (name, a), (_, b) in zip(ours, theirs) if a != b]
    assert not diffs, diffs
    return ours


@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_case_matches_shardy(case, conservative):
    assert_same_rules(CASES[case], conservative)


@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
@pytest.mark.parametrize("model", MODELS)
def test_model_matches_shardy(model, conservative):
    path = os.path.join(CORPUS, f"{model}.mlir")
    if not os.path.exists(path):
        pytest.skip(f"corpus model {path} not present")
    rules = assert_same_rules(open(path).read(), conservative)
    assert any(r is not None for _, r in rules)


@st.composite
def reshapes(draw):
    """Two shapes with the same number of elements: the same prime factors,
    grouped into dimensions in two different ways, with some 1s mixed in."""
    primes = draw(st.lists(st.sampled_from([2, 2, 3, 5]), max_size=7))

    def shape():
        order = draw(st.permutations(primes)) if primes else []
        dims, cur = [], 1
        for p in order:
            cur *= p
            if draw(st.booleans()):
                dims.append(cur)
                cur = 1
        if cur > 1 or not dims and draw(st.booleans()):
            dims.append(cur)
        for _ in range(draw(st.integers(0, 2))):
            dims.insert(draw(st.integers(0, len(dims))), 1)
        return "x".join(map(str, dims))
    return shape(), shape()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reshapes())
def test_random_reshapes_match_shardy(shapes):
    src, dst = shapes
    assert_same_rules(_reshape("r", src, dst), conservative=False)
