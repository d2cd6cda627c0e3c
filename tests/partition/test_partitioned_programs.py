"""Generated sharded programs (sharded_programs.py: shapes, meshes,
shardings, element-wise ops, dots, reductions, reshapes, non-divisible
dimensions), as a JAX export gives them: sdylog's pipeline partitions them
(propagation, reshards, collectives, padding, per-device program) and every
device's results equal its shard of the unpartitioned run. A partitioner
may refuse a program with a located diagnostic (as Shardy does for some
non-divisible reshards); it may not crash or compute something else.

A small fixed sample by default; SDYLOG_HYPOTHESIS_EXAMPLES=N for more.
Skipped while a pass of the partitioner is missing."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, reject, settings

from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import PASSES
from sdylog.passes.pipelines import PartitionerOptions, partitioner_steps
from sdylog.simulate.simulate import simulate_text
from tests.partition.sharded_programs import sharded_programs

EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
MISSING = [s.name for s in partitioner_steps(PartitionerOptions()) if s.name not in PASSES]
needs_partitioner = pytest.mark.skipif(bool(MISSING), reason=f"the partitioner needs {', '.join(MISSING)}")
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ")


def _simulated(text: str, **options):
    try:
        return simulate_text(text, "generated.mlir", **options)
    except SdylogError as e:
        assert LOCATED.match(str(e)), f"an error without a location: {e}\n{text}"
        reject()


@needs_partitioner
@SETTINGS
@given(sharded_programs())
def test_partitioned_programs_compute_the_unpartitioned_results(text):
    report = _simulated(text, seed=3)
    assert report.partitioned
    assert report.ok, f"{text}\n{report.text()}"
    assert report.bytes_per_device == sum(c["bytes_per_device"] for c in report.collectives) >= 0


@needs_partitioner
@SETTINGS
@given(sharded_programs(max_ops=3))
def test_without_halo_exchange_too(text):
    report = _simulated(text, seed=5, halo_exchange=False)
    assert report.ok, f"{text}\n{report.text()}"
