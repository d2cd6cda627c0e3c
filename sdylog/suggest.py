"""'Did you mean' for a mistyped name (a command, a pass, a flag, an option)."""
from __future__ import annotations

import difflib


def did_you_mean(name: str, known, n: int = 3) -> str:
    """": did you mean 'X'?" (or 'one of X, Y'), or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(known), n=n, cutoff=0.6)
    if not close:
        return ""
    if len(close) == 1:
        return f": did you mean '{close[0]}'?"
    return ": did you mean one of " + ", ".join(f"'{c}'" for c in close) + "?"
