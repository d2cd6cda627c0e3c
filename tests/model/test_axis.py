"""Sub-axis arithmetic: prefix, overlap, merge, split, on an axis of size 16."""
import pytest
from hypothesis import given, strategies as st

from sdylog.model import AxisRef, SubAxis
from sdylog.model.axis import axes_size

N = 16  # the full axis "x" below


def sub(pre, size):
    return AxisRef("x", SubAxis(pre, size))


FULL = AxisRef("x")
# every sub-axis of an axis of size 16 (powers of two: pre*size divides 16)
SUBS = [sub(p, s) for p in (1, 2, 4, 8) for s in (2, 4, 8, 16) if p * s <= N and not (p == 1 and s == N)]
refs = st.sampled_from(SUBS + [FULL])


def test_interval_and_size():
    assert FULL.interval(N) == (1, 16) and FULL.size(N) == 16
    assert sub(2, 4).interval(N) == (2, 8) and sub(2, 4).size(N) == 4
    assert axes_size([sub(2, 4), AxisRef("y")], {"x": N, "y": 3}) == 12


def test_prefix_and_contains():
    assert sub(1, 2).is_prefix_of(FULL, N)
    assert sub(1, 2).is_strict_prefix_of(sub(1, 4), N)
    assert not sub(2, 2).is_prefix_of(FULL, N)   # inside, but not at the start
    assert FULL.contains(sub(2, 2), N)
    assert not sub(2, 2).contains(sub(1, 4), N)
    assert not AxisRef("y").contains(AxisRef("x"), N)


def test_overlap():
    assert sub(1, 4).overlaps(sub(2, 2), N)
    assert not sub(1, 2).overlaps(sub(2, 2), N)
    assert FULL.overlaps(sub(8, 2), N)
    assert not FULL.overlaps(AxisRef("y"), N)


def test_merge():
    assert sub(1, 2).can_merge(sub(2, 4), N)
    assert sub(1, 2).merge(sub(2, 4), N) == sub(1, 8)
    assert sub(1, 4).merge(sub(4, 4), N) == FULL  # the whole axis is printed as "x"
    assert not sub(2, 4).can_merge(sub(1, 2), N)
    with pytest.raises(ValueError):
        sub(1, 2).merge(sub(4, 2), N)


def test_split():
    assert FULL.split(4, N) == (sub(1, 4), sub(4, 4))
    assert sub(2, 4).split(4, N) == (sub(2, 4), None)
    with pytest.raises(ValueError):
        sub(2, 4).split(3, N)


def test_prefix_without_overlap_and_common_prefix():
    assert FULL.prefix_without_overlap(sub(4, 2), N) == sub(1, 4)
    assert sub(4, 4).prefix_without_overlap(sub(1, 8), N) is None
    assert sub(1, 4).prefix_without_overlap(AxisRef("y"), N) == sub(1, 4)
    assert sub(1, 4).greatest_common_prefix(sub(1, 8), N) == sub(1, 4)
    assert sub(1, 4).greatest_common_prefix(sub(2, 2), N) is None


@given(refs, refs)
def test_overlap_is_symmetric_and_contains_implies_overlap(a, b):
    assert a.overlaps(b, N) == b.overlaps(a, N)
    if a.contains(b, N):
        assert a.overlaps(b, N)
        assert a.can_coexist(b, N)


@given(refs, st.sampled_from([1, 2, 4, 8, 16]))
def test_split_then_merge_is_identity(a, k):
    if a.size(N) % k or k == a.size(N):
        return
    head, tail = a.split(k, N)
    assert head.is_prefix_of(a, N) and head.size(N) == k
    assert head.merge(tail, N) == a


@given(refs, refs)
def test_common_prefix_is_prefix_of_both(a, b):
    p = a.greatest_common_prefix(b, N)
    if p is not None:
        assert p.is_prefix_of(a, N) and p.is_prefix_of(b, N)
