"""conformance_cases.py writes again the few lines of run_lit.main and
run_executable.main that choose a suite's files and a file's cases, and runs
the scripts' commands in-process: both checked here against the scripts
themselves, on a few files of each kind."""
import json
import os
import sys

import pytest

import conformance_cases as cc

needs_shared = pytest.mark.skipif(cc.shared_dir() is None, reason=cc.missing_reason())

LIT_FILES = [
    "import/sharding_group_constraints.mlir",     # split: CHECK cases and expected errors
    "import/manual_axes_cleanup_failures.mlir",   # -verify-diagnostics, not split: one case
    "export/drop_sharding_and_mesh.mlir",         # CHECK-LABEL sections of one run
    "export/convert_global_to_local/sdy_all_reduce.mlir",   # --check-prefixes=CHECK,V1
    "export/reshard_to_collectives_keep_redundant_reshards_true.mlir",  # a run that fails: retried per function
]
EXECUTABLE_FILES = [
    "export/executable_convert_global_to_local/stablehlo_iota.mlir",
    "export/executable_partitioner_pipeline/single_device_switch.mlir",   # two RUN variants
]


def _main(script, argv, monkeypatch):
    monkeypatch.setattr(sys, "argv", [f"{script.__name__}.py"] + argv)
    script.main()


@needs_shared
def test_lit_files_are_those_run_lit_runs(tmp_path, monkeypatch):
    lit = cc.script("run_lit")
    monkeypatch.setattr(lit, "run_case", lambda *a: (True, ""))
    monkeypatch.setattr(lit, "run_sections", lambda *a: [(True, "")])
    report = tmp_path / "report.json"
    _main(lit, ["--json", str(report)] + [str(cc.tests_dir() / s) for s in cc.LIT_SUITES], monkeypatch)
    ran = {cc.Path(f).relative_to(cc.tests_dir()).as_posix() for f in json.loads(report.read_text())}
    assert sorted(ran) == sorted(cc.lit_files())


@needs_shared
def test_lit_cases_are_those_run_lit_counts(tmp_path, monkeypatch):
    lit = cc.script("run_lit")
    report = tmp_path / "report.json"
    _main(lit, ["--json", str(report)] + [str(cc.tests_dir() / f) for f in LIT_FILES], monkeypatch)
    theirs = {cc.Path(f).relative_to(cc.tests_dir()).as_posix(): [(f"#{r['case']}", r["ok"]) for r in rows]
              for f, rows in json.loads(report.read_text()).items()}
    ours = {f: [(case[len(f):], ok) for case, ok, _ in cc.run_file(f)] for f in LIT_FILES}
    assert ours == theirs


@needs_shared
def test_executable_files_and_cases_are_those_run_executable_counts(monkeypatch, capsys):
    ex = cc.script("run_executable")
    monkeypatch.setattr(ex, "run_variant", lambda *a: (True, ""))
    capsys.readouterr()
    _main(ex, [str(cc.tests_dir() / f) for f in cc.EXECUTABLE_FOLDERS], monkeypatch)
    ran = [line.split(" ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("PASS ")]
    assert [cc.Path(f).relative_to(cc.tests_dir()).as_posix() for f in ran] == cc.executable_files()
    monkeypatch.undo()

    ex = cc.script("run_executable")
    _main(ex, [str(cc.tests_dir() / f) for f in EXECUTABLE_FILES], monkeypatch)
    theirs = [line.split(" ", 1)[0] == "PASS" for line in capsys.readouterr().out.splitlines()
              if line.startswith(("PASS ", "FAIL "))]
    assert theirs == [cc.run_file(f)[0][1] for f in EXECUTABLE_FILES]


@needs_shared
@pytest.mark.parametrize("rel", [LIT_FILES[1], LIT_FILES[2], LIT_FILES[4], EXECUTABLE_FILES[0]])
def test_in_process_commands_answer_as_subprocesses(rel, monkeypatch):
    """Exit codes, stdout for FileCheck, stderr for expected diagnostics."""
    in_process = [row[:2] for row in cc.run_file(rel)]
    for name in ("run_lit", "run_executable"):
        monkeypatch.setattr(cc.script(name), "subprocess", cc.Subprocesses)
    assert [row[:2] for row in cc.run_file(rel)] == in_process


def crash_on_b(rel):
    """A run that kills its worker process on file "b" (as a crash in C would)."""
    if rel == "b":
        os._exit(11)
    return [(f"{rel}#0", True, "")]


def test_a_worker_crash_loses_no_other_file():
    alone = []

    def run_alone(rel):
        alone.append(rel)
        return [(f"{rel}#0", rel != "b", "crashed" if rel == "b" else "")]

    runs = cc.Runs(["a", "b", "c", "d"], 2, run=crash_on_b, run_alone=run_alone)
    try:
        got = {rel: runs.outcomes(rel) for rel in ["a", "b", "c", "d"]}
    finally:
        runs.close()
    assert got == {"a": [("a#0", True, "")], "b": [("b#0", False, "crashed")],
                   "c": [("c#0", True, "")], "d": [("d#0", True, "")]}
    assert "b" in alone
