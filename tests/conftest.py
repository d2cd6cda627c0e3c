import pytest

from sdylog.ir import make_context


@pytest.fixture
def mlir_ctx():
    """An MLIR context with sdylog's dialects, entered for the test."""
    ctx = make_context()
    with ctx:
        yield ctx
