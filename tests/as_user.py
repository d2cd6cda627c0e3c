"""Subprocesses that meet file modes as a user does, even when the tests run
as root (root writes in read-only folders: only without that override does
a test of an unwritable folder test anything)."""
import ctypes
import os


def _drop_dac_override():
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):   # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:   # PR_CAPBSET_DROP: the exec'd program never gets them
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def as_user() -> dict:
    """subprocess.run keyword arguments for that (none needed when not root)."""
    return {"preexec_fn": _drop_dac_override} if os.geteuid() == 0 else {}
