import pytest

from sdylog.ir import make_context


def pytest_addoption(parser):
    # (here, not in tests/golden: pytest only takes options from the root conftest)
    parser.addoption("--regen-golden", action="store_true",
                     help="rewrite golden/ expected files from the current output (after review)")
    parser.addoption("--update-ratchet", action="store_true",
                     help="rewrite tests/conformance/ratchet.txt: the conformance cases that pass "
                          "(for the files the session ran)")


@pytest.fixture
def mlir_ctx():
    """An MLIR context with sdylog's dialects, entered for the test."""
    ctx = make_context()
    with ctx:
        yield ctx
