"""User-facing errors in the `file:line:col: error: message` form."""
from jaxlib.mlir import ir


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


def format_location(loc: ir.Location | str, filename: str | None = None) -> str | None:
    """`file:line:col` of an MLIR location (its innermost frame's file
    location: sdylog/ir/locations.py), None when it has none.

    Modules parsed from text carry the buffer name "-"; `filename` replaces it.
    """
    from sdylog.ir.locations import parse_location, source_of
    src = source_of(parse_location(str(loc)))
    return None if src is None else src.text(filename)


def error_at(op_or_loc, message: str, filename: str | None = None) -> SdylogError:
    """An SdylogError located at an operation (or a location)."""
    loc = op_or_loc.location if hasattr(op_or_loc, "location") else op_or_loc
    return SdylogError(message, format_location(loc, filename))
