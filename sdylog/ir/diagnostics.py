"""User-facing errors in the `file:line:col: error: message` form (the
error classes live in sdylog/errors.py, which needs no MLIR)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from sdylog.errors import SdylogError, UsageError

if TYPE_CHECKING:
    from jaxlib.mlir import ir

__all__ = ["SdylogError", "UsageError", "decode_utf8", "error_at", "format_location"]


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


def format_location(loc: ir.Location | str, filename: str | None = None) -> str | None:
    """`file:line:col` of an MLIR location (its innermost frame's file
    location: sdylog/ir/locations.py), None when it has none.

    Modules parsed from text carry the buffer name "-"; `filename` replaces it.
    """
    from sdylog.ir.locations import parse_location, source_of
    src = source_of(parse_location(str(loc)))
    if src is None or src.line == 0:     # (line 0: no place in the file, e.g. an empty module)
        return None
    return src.text(filename)


def error_at(op_or_loc, message: str, filename: str | None = None) -> SdylogError:
    """An SdylogError located at an operation (or a location)."""
    loc = op_or_loc.location if hasattr(op_or_loc, "location") else op_or_loc
    return SdylogError(message, format_location(loc, filename))
