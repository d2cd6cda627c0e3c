"""Reading, verifying and printing MLIR modules with jaxlib's MLIR bindings."""
from sdylog.ir.context import make_context
from sdylog.ir.diagnostics import SdylogError, format_location
from sdylog.ir.module import load_module, parse_module, print_module, split_input

__all__ = ["make_context", "SdylogError", "format_location", "load_module",
           "parse_module", "print_module", "split_input"]
