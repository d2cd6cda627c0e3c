"""Golden files: each golden/CASE.in.mlir run through `sdylog run`'s code
path (in-process) must print golden/CASE.out.mlir and the report lines of
golden/CASE.report (the time-independent ones, conflicts listed as with -v).

After a reviewed change of the output: python -m pytest tests/golden
--regen-golden (or SDYLOG_REGEN_GOLDEN=1) rewrites the expected files
(golden/README.md)."""
from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from sdylog.commands.pipeline import run_pipeline, summary

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.name[:-len(".in.mlir")] for p in GOLDEN.glob("*.in.mlir"))
EXPECTED = (".out.mlir", ".report")


def regenerating(config) -> bool:
    return config.getoption("--regen-golden") or os.environ.get("SDYLOG_REGEN_GOLDEN") == "1"


def produce(case: str) -> dict[str, str]:
    """What `sdylog run -v golden/CASE.in.mlir` prints: the module (stdout)
    and the report without its time line (stderr)."""
    run = run_pipeline(f"{case}.in.mlir", name_ids=True)   # relative: locations read CASE.in.mlir:LINE:COL
    return {".out.mlir": run.text(), ".report": "\n".join(summary(run, verbose=True)) + "\n"}


@pytest.mark.parametrize("case", CASES)
def test_golden(case, monkeypatch, request):
    regenerate = regenerating(request.config)
    monkeypatch.chdir(GOLDEN)
    got = produce(case)
    problems = []
    for suffix, text in got.items():
        path = GOLDEN / f"{case}{suffix}"
        if regenerate:
            path.write_text(text)
            continue
        if not path.exists():
            problems.append(f"{path.name} is missing (--regen-golden writes it; review it first)")
            continue
        expected = path.read_text()
        if text != expected:
            diff = difflib.unified_diff(expected.splitlines(keepends=True), text.splitlines(keepends=True),
                                        f"golden/{path.name}", f"sdylog run golden/{case}.in.mlir")
            problems.append("".join(diff))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_every_expected_file_has_its_case():
    assert CASES, f"no golden cases in {GOLDEN}"
    stale = [p.name for p in GOLDEN.iterdir()
             if p.name.endswith(EXPECTED) and p.name.split(".")[0] not in CASES]
    assert not stale, f"expected files without a CASE.in.mlir: {stale}"


@pytest.mark.parametrize("case", CASES)
def test_report_lists_what_the_full_version_writes(case, monkeypatch):
    """The report's reshards and collectives (rules/reshard/inventory.dl,
    costed by reshard_costs.dl, and those the export wrote) are, kind by
    kind, as many and as many bytes per device as the sdy ops the full
    version of -sdy-insert-explicit-reshards writes into the module,
    costed op by op (sdylog/reshard/report.py's written_ops)."""
    from sdylog.passes import PassContext, lookup
    from sdylog.reshard.report import written_ops

    monkeypatch.chdir(GOLDEN)
    run = run_pipeline(f"{case}.in.mlir")
    reported = {k: (n, b) for k, (n, _written, b) in run.needed.totals().items()}
    with run.module.context:
        lookup("sdy-insert-explicit-reshards").load()(run.module, {"enable-full-version": True},
                                                      PassContext(filename=run.ctx.filename))
        written: dict = {}
        for op in written_ops(run.module, run.ctx.filename):
            n, b = written.get(op.kind, (0, 0))
            written[op.kind] = (n + 1, b + (op.bytes_per_device or 0))
    assert reported == written
