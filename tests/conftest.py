import pytest

from sdylog.ir import make_context


def pytest_addoption(parser):
    # (here, not in tests/golden: pytest only takes options from the root conftest)
    parser.addoption("--regen-golden", action="store_true",
                     help="rewrite golden/ expected files from the current output (after review)")


@pytest.fixture
def mlir_ctx():
    """An MLIR context with sdylog's dialects, entered for the test."""
    ctx = make_context()
    with ctx:
        yield ctx
