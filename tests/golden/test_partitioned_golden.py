"""Golden partitioned programs: each golden/partitioned/CASE.in.mlir (a
program as a JAX export gives it) run through `sdylog run --partition`'s
code path must print golden/partitioned/CASE.out.mlir (the per-device
program) and the collectives of CASE.report; and simulated on its mesh it
must compute what the unpartitioned program does, so that no golden file
records a wrong program.

After a reviewed change of the output: python -m pytest tests/golden
--regen-golden (golden/README.md). Skipped while a partitioner pass is
missing."""
from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from sdylog.commands.pipeline import run_pipeline
from sdylog.partition.pipeline import collectives_table
from sdylog.passes import PASSES
from sdylog.passes.pipelines import PartitionerOptions, partitioner_steps
from sdylog.simulate.simulate import simulate_main
from tests.golden.test_golden import regenerating

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "partitioned"
CASES = sorted(p.name[:-len(".in.mlir")] for p in GOLDEN.glob("*.in.mlir"))
MISSING = [s.name for s in partitioner_steps(PartitionerOptions()) if s.name not in PASSES]


def produce(case: str) -> dict[str, str]:
    run = run_pipeline(f"{case}.in.mlir", partition=PartitionerOptions())
    return {".out.mlir": run.text(), ".report": "\n".join(collectives_table(run.collectives)) + "\n"}


@pytest.mark.skipif(bool(MISSING), reason=f"the partitioner needs {', '.join(MISSING)}")
@pytest.mark.parametrize("case", CASES)
def test_partitioned_golden(case, monkeypatch, request):
    monkeypatch.chdir(GOLDEN)
    report = simulate_main(f"{case}.in.mlir", seed=1)
    assert report.ok and report.partitioned, report.text()
    problems = []
    for suffix, text in produce(case).items():
        path = GOLDEN / f"{case}{suffix}"
        if regenerating(request.config):
            path.write_text(text)
        elif not path.exists():
            problems.append(f"{path.name} is missing (--regen-golden writes it; review it first)")
        elif text != path.read_text():
            problems.append("".join(difflib.unified_diff(
                path.read_text().splitlines(keepends=True), text.splitlines(keepends=True),
                f"golden/partitioned/{path.name}", f"sdylog run --partition golden/partitioned/{case}.in.mlir")))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_every_expected_file_has_its_case():
    assert CASES
    stale = [p.name for p in GOLDEN.iterdir()
             if p.name.endswith((".out.mlir", ".report")) and p.name.split(".")[0] not in CASES]
    assert not stale, f"expected files without a CASE.in.mlir: {stale}"
