"""Generated programs (tests/generators/stablehlo_programs.py) through sdylog
and through Shardy (../shared/conformance/shardy_ref_opt.py): sdylog never
fails on a program Shardy propagates, and every value agrees (compare_shardings.py;
reshards too, compare_collectives.py, once sdylog has the reshard step: see
generators/shardy_differential.py).

The normal suite runs a small fixed sample (hypothesis derandomized). A larger
run by hand:

    SDYLOG_SHARED=../shared SDYLOG_GENERATED_EXAMPLES=300 SDYLOG_GENERATED_OPS=100 \\
        python -m pytest tests/propagation/test_generated_vs_shardy.py

(hypothesis shrinks what fails: add it to tests/propagation/regressions with
shardy_differential.save_case), or tests/generators/vs_shardy.py for the
agreement figures at several sizes."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from generators import shardy_differential as diff
from generators.stablehlo_programs import ProgramConfig, programs

EXAMPLES = int(os.environ.get("SDYLOG_GENERATED_EXAMPLES", "12"))
OPS = int(os.environ.get("SDYLOG_GENERATED_OPS", "16"))
# (a hand run explores; the normal suite runs the same programs every time)
RANDOM = "SDYLOG_GENERATED_EXAMPLES" in os.environ

pytestmark = pytest.mark.skipif(diff.missing_reason() is not None, reason=diff.missing_reason() or "")

SETTINGS = settings(max_examples=EXAMPLES, derandomize=not RANDOM, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check(text: str, flags: list[str]) -> None:
    try:
        result = diff.compare(text, flags)
    except diff.OracleError:
        return   # not an input Shardy propagates: nothing to compare
    assert result.full, f"sdylog differs from Shardy ({' '.join(flags)}):\n" + "\n".join(result.mismatches[:20]) + \
        f"\n--- program:\n{text}"


@SETTINGS
@given(programs(ProgramConfig(ops=OPS)))
def test_pipeline_agrees_with_shardy(program):
    check(program.text, [diff.PIPELINE])


@SETTINGS
@given(programs(ProgramConfig(ops=OPS, max_meshes=1, priorities=False)))
def test_basic_propagation_agrees_with_shardy(program):
    check(program.text, ["-sdy-basic-propagate"])
