"""Pausing Python's cyclic garbage collector while relations are built: an
evaluation allocates millions of small tuples and no cycles worth collecting
(the engines break their own), which each young collection would scan for
nothing. Refcounting still frees what is dropped."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused(promote_survivors: bool = False):
    """No cyclic collection inside the block (nested pauses do nothing). With
    `promote_survivors`, what is still alive at its end goes straight to the
    oldest generation (freeze, unfreeze), which only the rare full collection
    scans: the next young one would otherwise scan every tuple the block kept."""
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
