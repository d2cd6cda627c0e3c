"""User-facing errors in the `file:line:col: error: message` form."""
import re

from jaxlib.mlir import ir

_FILE_LOC = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')


class SdylogError(Exception):
    """An error to show the user as-is; the CLI prints it and exits 1."""

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location:
            return f"{self.location}: error: {self.message}"
        return f"error: {self.message}"


class UsageError(SdylogError):
    """A command used wrongly (an unknown pass, flag or option): exit 2."""


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
    """`file:line:col` of an MLIR location (the first file location inside it).

    Modules parsed from text carry the buffer name "-"; `filename` replaces it.
    """
    m = _FILE_LOC.search(str(loc))
    if not m or m["line"] == "0":         # (line 0: no place in the file, e.g. an empty module)
        return None
    name = m["file"]
    if filename is not None and name in ("-", ""):
        name = filename
    return f"{name}:{m['line']}:{m['col']}"


def error_at(op_or_loc, message: str, filename: str | None = None) -> SdylogError:
    """An SdylogError located at an operation (or a location)."""
    loc = op_or_loc.location if hasattr(op_or_loc, "location") else op_or_loc
    return SdylogError(message, format_location(loc, filename))
