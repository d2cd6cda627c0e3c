"""Pausing Python's cyclic garbage collector while relations are built.

An evaluation allocates millions of small tuples and no cycles worth
collecting (the engines break their own): each young collection would scan
them all, for nothing. Refcounting still frees what is dropped.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused(promote_survivors: bool = False):
    """No cyclic collection inside the block. With `promote_survivors`, the
    objects still alive at its end go straight to the oldest generation
    (freeze, then unfreeze), which only a full collection scans, and that
    is rare: the next young collection would otherwise scan every tuple the
    block kept. Nested pauses do nothing; the outermost one restores."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if promote_survivors:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
