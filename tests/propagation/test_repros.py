"""Regression cases against Shardy: each tests/propagation/regressions/NAME.mlir
(its first line `// FLAGS: ...`, then what it shows) must give, value by value,
the shardings of NAME.expected.mlir, Shardy's output (for the pipeline: without
its reshard step). The cases are the minimized disagreements of
../shared/conformance/repros and generated programs shrunk by hypothesis
(test_generated_vs_shardy.py) or by tests/generators/shrink.py.

A new case: generators.shardy_differential.save_case(directory, name, module
text, flags, comment) writes both files (Shardy's output from the oracle).
The comparison is ../shared/conformance/compare_shardings.py (SDYLOG_SHARED):
without it these tests skip."""
from __future__ import annotations

from pathlib import Path

import pytest

from generators import shardy_differential as diff

CASES_DIR = Path(__file__).parent / "regressions"
CASES = sorted(p.stem for p in CASES_DIR.glob("*.mlir") if not p.name.endswith(".expected.mlir"))
# A case whose comment has a line `// KNOWN DIFFERENCE: why` shows what sdylog
# does not reproduce yet: its comparison must fail (strict xfail), so that
# the day it agrees the marker goes.
KNOWN = "// KNOWN DIFFERENCE:"


def known_difference(name: str) -> str | None:
    for line in (CASES_DIR / f"{name}.mlir").read_text().splitlines():
        if line.startswith(KNOWN):
            return line[len(KNOWN):].strip()
        if not line.startswith("//"):
            return None
    return None


AGREEING = [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=known_difference(name)))
            if known_difference(name) else name for name in CASES]


@pytest.fixture(scope="module")
def oracle():
    reason = diff.missing_reason()
    if reason:
        pytest.skip(reason)


def read_case(name: str) -> tuple[str, list[str], str]:
    text = (CASES_DIR / f"{name}.mlir").read_text()
    return text, diff.case_flags(text), (CASES_DIR / f"{name}.expected.mlir").read_text()


@pytest.mark.parametrize("name", AGREEING)
def test_agrees_with_shardy(name, oracle):
    text, flags, expected = read_case(name)
    result = diff.compare_texts(expected, diff.sdylog(text, flags, with_reshards=False), reshards=False)
    assert result.full, f"{name} ({' '.join(flags)}):\n" + "\n".join(result.mismatches)


@pytest.mark.parametrize("name", CASES)
def test_expected_is_shardys_output(name, oracle):
    text, flags, expected = read_case(name)
    result = diff.compare_texts(diff.shardy(text, flags, with_reshards=False), expected, reshards=False)
    assert result.full, f"{name}.expected.mlir is no longer Shardy's output:\n" + "\n".join(result.mismatches)


def test_every_case_has_its_expected_output():
    assert CASES
    assert all((CASES_DIR / f"{name}.expected.mlir").exists() for name in CASES)
