"""User-facing errors in the `file:line:col: error: message` form (the
error classes live in sdylog/errors.py, which needs no MLIR)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from sdylog.errors import SdylogError, UsageError

if TYPE_CHECKING:
    from jaxlib.mlir import ir

__all__ = ["SdylogError", "UsageError", "decode_utf8", "error_at", "failing_op", "format_location",
           "verifier_location"]


def decode_utf8(data: bytes, filename: str) -> str:
    """Source text; a byte that is not UTF-8 is an error at its line and
    column (columns count bytes, as MLIR's do)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - data.rfind(b"\n", 0, e.start)
        raise SdylogError(f"byte 0x{data[e.start]:02x} is not UTF-8 (the input must be UTF-8 text)",
                          f"{filename}:{line}:{col}") from None


def format_location(op_or_loc, filename: str | None = None) -> str | None:
    """`file:line:col` of an op or an MLIR location, None when it has none.

    An op's is its own location's file location, else the nearest enclosing
    op's (sdylog/ir/locations.py op_source: the ops of JAX's private helpers
    carry only a name, their function the call site); a location's is its
    innermost frame's file location. Modules parsed from text carry the
    buffer name "-"; `filename` replaces it.
    """
    from sdylog.ir.locations import op_source, parse_location, source_of
    if hasattr(op_or_loc, "location"):
        src = op_source(op_or_loc)
    else:
        src = source_of(parse_location(str(op_or_loc)))
    if src is None or src.line == 0:     # (line 0: no place in the file, e.g. an empty module)
        return None
    return src.text(filename)


def error_at(op_or_loc, message: str, filename: str | None = None) -> SdylogError:
    """An SdylogError located at an operation (or a location): format_location."""
    return SdylogError(message, format_location(op_or_loc, filename))


def failing_op(module: ir.Module):
    """The innermost op of a module that fails MLIR's verifier (verifying an
    op verifies what it holds), None if the module verifies. For a verifier
    diagnostic whose location has no file (an op of JAX's private helpers):
    format_location(failing_op(module)) is the nearest enclosing place."""
    op = module.operation
    if _verifies(op):
        return None
    while True:
        inner = next((child for region in op.regions for block in region.blocks
                      for child in block.operations if not _verifies(child)), None)
        if inner is None:
            return op
        op = getattr(inner, "operation", inner)


def _verifies(op) -> bool:
    from jaxlib.mlir import ir
    try:
        return op.verify()
    except ir.MLIRError:
        return False


def verifier_location(module: ir.Module, diagnostic_location, filename: str | None = None) -> str | None:
    """`file:line:col` of a verifier diagnostic: its location's, else that of
    the op failing verification (failing_op) or its nearest enclosing op."""
    where = format_location(diagnostic_location, filename)
    if where is None:
        op = failing_op(module)
        where = format_location(op, filename) if op is not None else None
    return where
