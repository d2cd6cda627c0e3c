"""What the generated simulate tests share: hypothesis settings, small
meshes, and `simulated` (the partitioner pipeline and the per-device program
on every device must give the global run's results).

SDYLOG_HYPOTHESIS_EXAMPLES=N runs N examples per generated test (default 10,
derandomized up to 25)."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from sdylog.simulate.simulate import simulate_text

EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "10"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

M2 = 'sdy.mesh @mesh = <["x"=2]>\n'
M22 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
MESHES = {"x2": M2, "x2y2": M22, "x4y2": 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'}
FULL = {"enable-full-version": True}


def simulated(text: str, name: str, seed: int = 3):
    report = simulate_text(text, name, seed=seed)
    assert report.ok, f"{text}\n{report.text()}"
    return report
