"""Load a module from a file or stdin, verify it, print it with MLIR's printer."""
import re
import sys

from jaxlib.mlir import ir

from sdylog.ir.context import shared_context
from sdylog.ir.diagnostics import SdylogError, decode_utf8, format_location, verifier_location

# `sdy_opt -split-input-file` splits on lines of exactly `// -----`.
_SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)


def read_source(path: str) -> str:
    """The text of a file, or of stdin for '-'."""
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        return decode_utf8(stdin.read(), display_name(path)) if stdin else sys.stdin.read()
    try:
        with open(path, "rb") as f:
            return decode_utf8(f.read(), path)
    except OSError as e:
        raise SdylogError(f"cannot read {path}: {e.strerror}") from None


def split_input(text: str) -> list[str]:
    """Chunks of a `-split-input-file` input, each padded with newlines so that
    MLIR's line numbers are those of the whole file."""
    chunks, start = [], 0
    for m in _SPLIT_MARKER.finditer(text):
        chunks.append("\n" * text.count("\n", 0, start) + text[start:m.start()])
        start = m.end()
    chunks.append("\n" * text.count("\n", 0, start) + text[start:])
    return chunks


def parse_module(text: str, filename: str = "-", context: ir.Context | None = None,
                 allow_unregistered: bool = False) -> ir.Module:
    """Parse and verify (MLIR's parser verifies what it parsed: no second
    walk here); errors become one SdylogError with every diagnostic."""
    ctx = context or shared_context(allow_unregistered)
    with ctx:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise _diagnostics_error(e, filename) from None
    return module


def verify_module(module: ir.Module, filename: str = "-") -> None:
    """MLIR's verifier; its diagnostics become one located SdylogError."""
    with module.context:
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise _diagnostics_error(e, filename, module) from None


def load_module(path: str, allow_unregistered: bool = False,
                context: ir.Context | None = None) -> ir.Module:
    return parse_module(read_source(path), display_name(path), context, allow_unregistered)


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def print_module(module: ir.Module, verified: bool = False) -> str:
    """MLIR's own printer: the text `sdy_opt` prints. MLIR's printer verifies
    the module first (to fall back to the generic form if it is invalid);
    `verified`: the caller just verified it, which spares that walk."""
    return module.operation.get_asm(assume_verified=verified)


def _diagnostics_error(e: ir.MLIRError, filename: str, module: ir.Module | None = None) -> SdylogError:
    """The first diagnostic located (for a verified `module`: at the failing
    op, or its nearest enclosing place when its own location has no file),
    the others as lines after it."""
    diags = list(e.error_diagnostics) or []
    if not diags:
        return SdylogError(str(e).strip())
    first = diags[0]
    lines = []
    for d in diags[1:]:
        where = format_location(d.location, filename)
        lines.append(f"{where}: error: {d.message}" if where else f"error: {d.message}")
    where = (verifier_location(module, first.location, filename) if module is not None
             else format_location(first.location, filename))
    err = SdylogError(first.message, where)
    if lines:
        err.message += "\n" + "\n".join(lines)
    return err
