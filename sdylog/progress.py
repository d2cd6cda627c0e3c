"""What long work is doing, on one line of stderr that each step rewrites,
only when stderr is a terminal (a log or a pipe gets nothing): the phases
of run/query/explain on a large model, the --db file, simulate's runs."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.start = time.perf_counter()

    def step(self, name: str) -> None:
        """`[sdylog 1.2s] propagation...` in place of the last step."""
        if self.enabled:
            self.stream.write(f"\r\x1b[K[sdylog {time.perf_counter() - self.start:.1f}s] {name}...")
            self.stream.flush()

    def done(self) -> None:
        """Clear the line (the command's own output follows)."""
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
