"""Conformance ratchet: Shardy's own lit tests (shared/conformance/shardy-tests:
propagation, import, export) and executable partitioner tests
(export/executable_convert_global_to_local, export/executable_partitioner_pipeline)
run against sdylog, one test per file, with the cases and pass criteria of
run_lit.py and run_executable.py (conformance_cases.py runs them in-process,
on a pool of one worker per CPU).

ratchet.txt lists the cases sdylog passes. A listed case that fails fails its
file's test, with FileCheck's message or the tool's stderr. A case that passes
but is not listed is named in the session's summary ("conformance ratchet");
add them (and drop listed ones that fail) with

    python -m pytest tests/conformance --update-ratchet

(a -k selection updates only the files it runs). The suites are found in
$SDYLOG_SHARED, else in the `shared` folder beside the repository or one of
its parents; without them these tests are skipped.
"""
import pytest

import conformance_cases as cc

SHARED = cc.shared_dir()
FILES = cc.lit_files() + cc.executable_files() if SHARED else []
NO_SHARED = pytest.mark.skip(reason=cc.missing_reason())


@pytest.mark.parametrize("rel", FILES or [pytest.param("-", marks=NO_SHARED)])
def test_listed_cases_pass(rel, ratchet, request):
    selected = [item.callspec.params["rel"] for item in request.session.items
                if item.originalname == "test_listed_cases_pass" and hasattr(item, "callspec")]
    outcomes = ratchet.start(selected).outcomes(rel)
    ratchet.results[rel] = outcomes
    if ratchet.update:
        return
    listed = {case for case in ratchet.listed if case.rpartition("#")[0] == rel}
    failing = [(case, why) for case, ok, why in outcomes if case in listed and not ok]
    gone = sorted(listed - {case for case, _, _ in outcomes}, key=cc.case_key)
    if failing or gone:
        lines = [f"{len(failing) + len(gone)} of the {len(listed)} listed cases of {rel} fail "
                 f"(reproduce: {cc.command_line(rel)}):"]
        lines += [f"--- {case}\n{cc.trim(why)}" for case, why in failing]
        lines += [f"--- {case}\nno such case: the file has {len(outcomes)}" for case in gone]
        pytest.fail("\n".join(lines), pytrace=False)


@pytest.mark.skipif(SHARED is None, reason=cc.missing_reason())
def test_ratchet_lists_cases_of_the_suites_sorted():
    """Every listed case names a file these tests run; the list is sorted
    and has no duplicates (so that its diffs read well)."""
    lines = [line for line in cc.RATCHET_FILE.read_text().splitlines() if line and not line.startswith("# ")]
    assert lines == sorted(set(lines), key=cc.case_key)
    unknown = sorted({case.rpartition("#")[0] for case in lines} - set(FILES))
    assert not unknown, f"ratchet.txt lists cases of files that are not in the suites: {unknown}"
