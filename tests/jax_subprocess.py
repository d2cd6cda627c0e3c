"""Run a JAX program generator in its own process on 8 host CPU devices.

jax fixes its device count when it first starts, so the test process (which
must not start jax with 8 devices for every test) runs generators apart.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def run_on_8_devices(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """`python *args` with jax on 8 host devices (skips without jax)."""
    pytest.importorskip("jax")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout)


def generated_programs(script: Path, *args: str, timeout: int = 300):
    """The JSON a generator script prints on stdout."""
    p = run_on_8_devices(str(script), *args, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)
