"""`sdylog simulate` on the corpus' small JAX exports (shared/corpus/jax; without
it, the repository's examples):
propagation, the partitioner and global-to-local, then every device's results
equal to its shard of the unpartitioned run. The transformers (seconds to a
minute each) are measured, not tested here: see the issue 18 measurements."""
import sys
from pathlib import Path

import pytest

from sdylog.simulate.simulate import simulate_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
from small_models import small_models  # noqa: E402  (tests/commands' list of them)


@pytest.mark.parametrize("path", small_models(), ids=lambda p: p.name)
def test_small_model_matches_unpartitioned_run(path):
    report = simulate_text(path.read_text(), str(path), seed=0)
    assert report.partitioned
    assert report.ok, report.text()
