"""`sdylog explain FILE VALUE` on a module with device placements names the
values of the MPMD run (the module with its calls inlined) by the input's
names of the values left, and only those. Inlining erases the calls'
results, and a value the inlining makes may take an erased one's address:
the MLIR bindings compare values by address, so a name looked up by the
handle alone went to an inlined copy (in tests/mpmd/data/pipeline_gpipe.mlir
`%3` or `%6`, call results, named an op of a callee's body) in about 1 run
in 12 in one process."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest

from sdylog.ir.diagnostics import SdylogError
from sdylog.mpmd.command import options_from
from sdylog.mpmd.explain import Explainer, explain_text, mpmd_engine

PIPELINE = str(Path(__file__).parent / "data" / "pipeline_gpipe.mlir")
OPTIONS = options_from((), "off", "star", "on", "on", "replicate", 1, 2)
# @main's values left once its calls are inlined: its arguments and the adds
LEFT = {f"%arg{i}" for i in range(6)} | {"%8", "%9", "%10"}


def test_explain_names_the_values_left_the_same_in_every_run():
    for run in range(40):
        ex = Explainer(*mpmd_engine(PIPELINE, OPTIONS))
        assert set(ex.names.values()) == LEFT, (run, sorted(ex.names.values()))
        assert len(ex.names) == len(LEFT), run
        with pytest.raises(SdylogError) as e:   # a call's result is gone
            explain_text(PIPELINE, "%3", OPTIONS)
        assert str(e.value) == "error: no value %3 in @main; values are %arg0..%arg5, %8..%10", run
        del ex, e
        gc.collect()   # (frees the erased values' memory for the next run's)
