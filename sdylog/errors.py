"""The errors a user sees (no MLIR needed to name them: `sdylog --help`
imports this, not the bindings). sdylog.ir.diagnostics locates them."""


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
