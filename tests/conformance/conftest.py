"""The conformance ratchet's session: one pool of workers runs the selected
files; at the end, a summary per suite and the cases that pass but are not
listed (--update-ratchet writes them into ratchet.txt)."""
from __future__ import annotations

import pytest

import conformance_cases as cc

_SESSION = pytest.StashKey()


class RatchetSession:
    """The listed cases, and the outcomes of the files this session ran."""

    def __init__(self, update: bool):
        self.update = update
        self.listed = cc.read_ratchet()
        self.results: dict[str, list[tuple[str, bool, str]]] = {}
        self.runs = None
        self.written = None   # (added, removed) when --update-ratchet wrote the list

    def start(self, files) -> cc.Runs:
        if self.runs is None:
            self.runs = cc.Runs(cc.largest_first(files), cc.jobs())
        return self.runs

    def passing(self) -> set[str]:
        return {case for rows in self.results.values() for case, ok, _ in rows if ok}

    def new_passes(self) -> list[str]:
        return sorted(self.passing() - self.listed, key=cc.case_key)

    def regenerated(self) -> set[str]:
        """The list with the cases of the files run replaced by those that passed."""
        run = {case for rows in self.results.values() for case, _, _ in rows}
        return (self.listed - run) | self.passing()


def ratchet_session(config) -> RatchetSession:
    if _SESSION not in config.stash:
        config.stash[_SESSION] = RatchetSession(config.getoption("--update-ratchet"))
    return config.stash[_SESSION]


@pytest.fixture(scope="session")
def ratchet(request):
    """The session's ratchet; its pool starts at the first test that asks
    for an outcome, with every selected conformance file."""
    session = ratchet_session(request.config)
    yield session
    if session.runs is not None:
        session.runs.close()


def pytest_sessionfinish(session):
    state = session.config.stash.get(_SESSION, None)
    if state is None or not state.update or not state.results:
        return
    new = state.regenerated()
    if new != state.listed or not cc.RATCHET_FILE.exists():
        cc.write_ratchet(new)
    state.written = (sorted(new - state.listed, key=cc.case_key), sorted(state.listed - new, key=cc.case_key))


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_SESSION, None)
    if state is None or not state.results:
        return
    tr = terminalreporter
    tr.section("conformance ratchet")
    cases = [row for rows in state.results.values() for row in rows]
    reference = cc.reference_counts()
    for suite in sorted({cc.suite_of(c) for c, _, _ in cases}, key=_suite_order):
        rows = [(c, ok) for c, ok, _ in cases if cc.suite_of(c) == suite]
        passing = sum(ok for _, ok in rows)
        listed = sum(c in state.listed for c, _ in rows)
        ref = reference.get(suite)
        ref_text = f"; Shardy's jaxlib build {ref[0]}/{ref[1]}" if ref else ""
        tr.write_line(f"{suite}: {passing}/{len(rows)} cases pass, {listed} listed{ref_text}")
    if state.written is not None:
        added, removed = state.written
        tr.write_line(f"{cc.RATCHET_FILE.name} rewritten: {_cases(len(added))} added, "
                      f"{_cases(len(removed))} removed")
        for case in removed:
            tr.write_line(f"  removed (now fails): {case}")
        return
    new = state.new_passes()
    if new:
        tr.write_line(f"{_cases(len(new))} pass but are not listed in tests/conformance/{cc.RATCHET_FILE.name}; "
                      "add them with: python -m pytest tests/conformance --update-ratchet")
        for case in new[:30]:
            tr.write_line(f"  {case}")
        if len(new) > 30:
            tr.write_line(f"  ... and {len(new) - 30} more")


def _cases(n: int) -> str:
    return f"{n} case" if n == 1 else f"{n} cases"


def _suite_order(suite: str):
    order = list(cc.LIT_SUITES) + list(cc.EXECUTABLE_FOLDERS)
    return order.index(suite) if suite in order else len(order)
